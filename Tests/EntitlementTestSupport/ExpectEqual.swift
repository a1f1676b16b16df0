import Testing

/// Records an issue at the caller's line unless `lhs == rhs`, showing both values (and, for
/// collections, their difference) as `#expect(lhs == rhs)` does.
///
/// One plain generic call: the compiler type-checks it in a fraction of the time it spends on an
/// `#expect(a == b)` expansion (an overloaded `==` inside a closure), and the suite makes over a
/// thousand such comparisons.
public func expectEqual<Value: Equatable>(
    _ lhs: Value, _ rhs: Value, _ comment: @autoclosure () -> Comment? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(lhs == rhs, comment(), sourceLocation: sourceLocation)
}
