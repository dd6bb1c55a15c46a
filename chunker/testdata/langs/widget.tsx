import React, { useState } from "react";
import type { Props } from "./types";

// Widget shows a counter.
export function Widget({ label }: Props) {
  const [n, setN] = useState(0);
  return <button onClick={() => setN(n + 1)}>{label}: {n}</button>;
}

export class Panel extends React.Component<Props> {
  state = { open: false };
  toggle = () => this.setState({ open: !this.state.open });
  render() {
    return <div>{this.props.children}</div>;
  }
}
