// @flow
type Props = { name: string };

function greet(p: Props): string {
  return "hi " + p.name;
}

export function add(a: number, b: number): number {
  return a + b;
}

class Box<T> {
  value: T;
  constructor(v: T) {
    this.value = v;
  }
  get(): T {
    return this.value;
  }
}

function plain(x) {
  return x;
}
