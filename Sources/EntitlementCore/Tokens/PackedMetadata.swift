/// A profile's attributes packed into one byte array: what an authentication keeps of its metadata.
///
/// A `[String: MetadataValue]` of a few attributes takes about 300 bytes of heap (the dictionary's
/// storage, and an array per list); packed, the same attributes take their UTF-8 and a few length
/// bytes in one allocation. A session host keeps a million authentications, so this is most of the
/// difference between fitting in 1 GiB and not (`entitle bench engine --only sessions`).
///
/// Entries are sorted by key, so equal dictionaries pack to equal bytes. Each entry is the key, a
/// kind byte (0 text, 1 list), then the text, or the list's count and its texts; every text and
/// count is preceded by its length as an unsigned LEB128 number.
struct PackedMetadata: Sendable {
    private var bytes: [UInt8]

    static let empty = PackedMetadata(bytes: [])

    private init(bytes: [UInt8]) { self.bytes = bytes }

    /// Packs `metadata`.
    init(_ metadata: [String: MetadataValue]) {
        self.init(entries: Array(metadata))
    }

    /// Packs `entries`, whose keys are distinct (a dictionary's, or a profile's attribute names), in one
    /// buffer sized for them.
    init(entries: [(key: String, value: MetadataValue)]) {
        guard !entries.isEmpty else {
            self = .empty
            return
        }
        var size = 0
        for (key, value) in entries {
            size += key.utf8.count + 3
            switch value {
            case .text(let text): size += text.utf8.count + 2
            case .list(let texts): size += texts.reduce(2) { $0 + $1.utf8.count + 2 }
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size)
        for (key, value) in entries.sorted(by: { $0.key < $1.key }) {
            Self.append(key, to: &bytes)
            switch value {
            case .text(let text):
                bytes.append(0)
                Self.append(text, to: &bytes)
            case .list(let texts):
                bytes.append(1)
                Self.appendLength(texts.count, to: &bytes)
                for text in texts { Self.append(text, to: &bytes) }
            }
        }
        self.bytes = bytes
    }

    var isEmpty: Bool { bytes.isEmpty }

    /// The attributes as a dictionary.
    var dictionary: [String: MetadataValue] {
        var metadata: [String: MetadataValue] = [:]
        forEach { key, value in metadata[key] = value }
        return metadata
    }

    /// The value named `key`, read without building the dictionary.
    subscript(key: String) -> MetadataValue? {
        var found: MetadataValue?
        forEach { name, value in
            if found == nil, name == key { found = value }
        }
        return found
    }

    /// Calls `body` with every entry, in key order.
    private func forEach(_ body: (String, MetadataValue) -> Void) {
        var reader = Reader(bytes: bytes)
        while !reader.atEnd {
            // The bytes were packed by `init(_:)`: a short read only ends the walk.
            guard let key = reader.text(), let kind = reader.byte() else { return }
            switch kind {
            case 0:
                guard let text = reader.text() else { return }
                body(key, .text(text))
            default:
                guard let count = reader.length() else { return }
                var texts: [String] = []
                texts.reserveCapacity(min(count, bytes.count))
                for _ in 0..<count {
                    guard let text = reader.text() else { return }
                    texts.append(text)
                }
                body(key, .list(texts))
            }
        }
    }

    // MARK: - Encoding

    private static func append(_ text: String, to bytes: inout [UInt8]) {
        var text = text
        text.withUTF8 { utf8 in
            appendLength(utf8.count, to: &bytes)
            bytes.append(contentsOf: utf8)
        }
    }

    private static func appendLength(_ length: Int, to bytes: inout [UInt8]) {
        var rest = UInt(length)
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    /// Reads what `init(_:)` wrote; every read is bounded by the bytes.
    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        var atEnd: Bool { index >= bytes.count }

        mutating func byte() -> UInt8? {
            guard index < bytes.count else { return nil }
            defer { index += 1 }
            return bytes[index]
        }

        mutating func length() -> Int? {
            var value = 0, shift = 0
            while let byte = byte() {
                guard shift < 63 else { return nil }
                value |= Int(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
            return nil
        }

        mutating func text() -> String? {
            guard let length = length(), length >= 0, length <= bytes.count - index else { return nil }
            defer { index += length }
            return String(decoding: bytes[index..<(index + length)], as: UTF8.self)
        }
    }
}

// MARK: - Equality

extension PackedMetadata: Hashable {
    /// Equal attributes: the same bytes, or (keys or texts equal as Swift strings but spelt with other
    /// scalars, such as a composed and a decomposed "é") the same dictionary.
    static func == (lhs: PackedMetadata, rhs: PackedMetadata) -> Bool {
        lhs.bytes == rhs.bytes || lhs.dictionary == rhs.dictionary
    }

    func hash(into hasher: inout Hasher) { hasher.combine(dictionary) }
}
