import Foundation
@testable import MyKit

/// Doc.
@MainActor
public final class Foo: Bar, Baz {
    private var x = 1
    init(x: Int) { self.x = x }
    // c
    @discardableResult
    func load(_ p: String) async throws -> Int {
        return 1
    }
    deinit {}
    subscript(i: Int) -> Int { i }
}
struct S { let a: Int }
protocol P { func f() }
extension Foo: P { func f() {} }
enum E { case a, b; func g() {} }
func top() -> Int { 1 }
typealias A = Int
let k = 1
