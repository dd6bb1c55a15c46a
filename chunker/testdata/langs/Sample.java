package com.acme.model;

import java.util.List;
import static java.util.Map.entry;
import com.acme.*;

/** Doc for Foo. */
@Entity(name = "x")
public class Foo<T> extends Bar implements Baz {
    private int x = 1;
    // line comment
    @Override
    public Foo(int x) throws IOException {
        this.x = x;
    }
    static { init(); }
    public <U> List<U> map(Function<T, U> f) {
        return null;
    }
    interface Inner { void f(); }
    enum Color { RED, GREEN; void g() {} }
    record Point(int x, int y) { Point { } }
}
@interface Ann { String value() default ""; }
