const path = require('path');
const { a, b: c } = require('./lib/x');
import def, { y } from "./y.js";
export * from './z';
export { q } from './q';

class A extends B {
  #priv = 1;
  static s = 2;
  constructor() { super(); }
  get v() { return 1; }
  *gen() {}
}
function* g() {}
async function f() {}
module.exports = { f };
export default class {}
const Comp = ({ x }) => {
  return <div>{x}</div>;
};
