package com.acme.model

import scala.collection.mutable
import com.acme.util.{Foo, Bar => B}
import com.acme.other._

/** Doc. */
@deprecated("x")
final case class Foo[T](a: Int) extends Bar with Baz {
  val x = 1
  def this() = this(1)
  // c
  def load(p: String): Int = {
    1
  }
}
object Foo { def apply(): Foo[Int] = new Foo(1) }
trait Tr { def m(): Unit }
enum Color { case Red }
def top(a: Int) = a
given Ordering[Int] = ???
