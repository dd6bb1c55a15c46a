package demo

import scala.concurrent.Future

trait Show[A]:
  def show(a: A): String

given intShow: Show[Int] with
  def show(a: Int): String = a.toString

extension (s: String)
  def shout: String = s.toUpperCase
  def whisper: String = s.toLowerCase

object Main:
  def greet(name: String)(using sh: Show[String]): String =
    val msg = s"hi $name"
    sh.show(msg)

  def twice(x: Int): Int =
    x * 2
end Main

enum Color:
  case Red, Green

class Box(val v: Int):
  def get: Int = v
  def put(x: Int): Box = Box(x)

def topLevel(a: Int): Int =
  if a > 0 then a else -a
