/// Comparison whose running time does not depend on where two secrets first differ.
package enum ConstantTime {
    /// True when `lhs` and `rhs` hold the same bytes; time depends only on the lengths.
    package static func equals(_ lhs: String, _ rhs: String) -> Bool {
        // Read in place (a native string's UTF-8 is contiguous): no copy of either secret.
        var lhs = lhs, rhs = rhs
        return lhs.withUTF8 { left in
            rhs.withUTF8 { right in
                var difference = UInt8(left.count == right.count ? 0 : 1)
                let count = max(left.count, right.count)
                for index in 0..<count {
                    let a = index < left.count ? left[index] : 0
                    let b = index < right.count ? right[index] : 0
                    difference |= a ^ b
                }
                return difference == 0
            }
        }
    }
}
