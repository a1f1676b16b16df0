/// Finding and replacing text by its UTF-8 bytes: exact, allocation-free while searching, and much
/// cheaper than `String.contains(_:)`, which compares by characters through a general searcher.
/// A byte match also finds a secret followed by a combining mark, which a character match misses.
package enum ByteSearch {
    /// The offset of `needle`'s first occurrence in `haystack` at or after `start`, or nil.
    package static func firstOffset(
        of needle: UnsafeBufferPointer<UInt8>, in haystack: UnsafeBufferPointer<UInt8>, from start: Int = 0
    ) -> Int? {
        let count = needle.count
        guard start >= 0, start <= haystack.count, haystack.count - start >= count else { return nil }
        guard count > 0 else { return start }
        let first = needle[0]
        var index = start
        let last = haystack.count - count
        search: while index <= last {
            if haystack[index] == first {
                var offset = 1
                while offset < count {
                    guard haystack[index + offset] == needle[offset] else {
                        index += 1
                        continue search
                    }
                    offset += 1
                }
                return index
            }
            index += 1
        }
        return nil
    }

    /// Whether `text` holds `part`, byte for byte.
    package static func contains(_ part: String, in text: String) -> Bool {
        var text = text, part = part
        return text.withUTF8 { haystack in part.withUTF8 { needle in firstOffset(of: needle, in: haystack) != nil } }
    }

    /// `text` with every occurrence of `target` (non-empty) replaced by `replacement`, left to right
    /// and without overlaps; nil when `text` does not hold `target` (nothing is built then).
    package static func replacing(_ target: String, with replacement: String, in text: String) -> String? {
        var text = text, target = target
        guard !target.isEmpty else { return nil }
        return text.withUTF8 { haystack -> String? in
            target.withUTF8 { needle -> String? in
                guard var found = firstOffset(of: needle, in: haystack) else { return nil }
                var bytes: [UInt8] = []
                bytes.reserveCapacity(haystack.count)
                var copied = 0
                while true {
                    bytes.append(contentsOf: UnsafeBufferPointer(rebasing: haystack[copied..<found]))
                    bytes.append(contentsOf: replacement.utf8)
                    copied = found + needle.count
                    guard let next = firstOffset(of: needle, in: haystack, from: copied) else { break }
                    found = next
                }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: haystack[copied...]))
                return String(decoding: bytes, as: UTF8.self)
            }
        }
    }
}
