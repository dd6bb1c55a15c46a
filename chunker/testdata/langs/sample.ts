import { foo, bar as baz } from './util';
import * as path from "path";
import Default from '../lib/x';
import type { T } from './types';
const fs = require('fs');

/** Doc. */
@Component({ selector: 'x' })
export class Foo<T> extends Bar implements Baz {
  private x: number = 1;
  constructor(private a: string) { super(); }
  // comment
  @Input() get y(): number { return 1; }
  async load(p: string): Promise<void> {
    return;
  }
  static make = () => new Foo('a');
}
export interface I { f(): void; }
export type U = string | number;
export enum E { A, B }
export function top(a: number): number {
  return a;
}
export const arrow = (x: number) => x * 2;
export default function () {}
namespace NS { export function g() {} }
declare module 'm' { export function h(): void; }
abstract class Abs { abstract m(): void; }
