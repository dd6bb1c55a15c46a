using System;
using System.Collections.Generic;
using Json = Newtonsoft.Json;
using static System.Math;

namespace Acme.Model;

/// <summary>Doc.</summary>
[Serializable]
public class Foo<T> : Bar, IBaz where T : class
{
    private int x = 1;
    public Foo(int x) { this.x = x; }
    public int X { get; set; }
    [Obsolete]
    public async Task<int> LoadAsync(string p) => 1;
    public event EventHandler E;
}
public interface I { void F(); }
public struct S { }
public enum Color { Red }
public record R(int A);
