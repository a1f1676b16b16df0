/// `application/x-www-form-urlencoded` (the WHATWG URL standard's form encoding), as REST API V2's
/// form bodies, the MVPD login pages and the programmers' servers use it: the package's one form
/// encoder and one form decoder.
package enum FormCoding {
    /// `name=value` pairs joined with `&`, each name and value percent-encoded (only RFC 3986's
    /// unreserved characters stay as they are), in the order given.
    package static func encode<Fields: Sequence>(_ fields: Fields) -> String where Fields.Element == (String, String) {
        var out: [UInt8] = []
        append(fields, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// ``encode(_:)``'s bytes appended to `out`.
    package static func append<Fields: Sequence>(_ fields: Fields, to out: inout [UInt8]) where Fields.Element == (String, String) {
        var first = true
        for (name, value) in fields {
            if !first { out.append(UInt8(ascii: "&")) }
            first = false
            PercentEncoding.append(name, to: &out)
            out.append(UInt8(ascii: "="))
            PercentEncoding.append(value, to: &out)
        }
    }

    /// The most fields a form is read for: every form the package reads (REST API V2's, a login page's, a
    /// programmer's server's) has a handful, and each field read costs two strings and a table entry, so
    /// a client sending thousands cannot make its body cost the others more than this many fields.
    package static let fieldLimit = 256

    /// The fields of a form: `+` is a space, `%XX` a byte; a field without `=` has an empty value;
    /// the first of two fields with one name wins; a field that does not decode (a bad escape, bytes
    /// that are not UTF-8) is skipped. Only the first ``fieldLimit`` fields are read; the rest are ignored.
    package static func decode(_ text: Substring) -> [String: String] {
        var fields: [String: String] = [:]
        for case let (name, value)? in decodedPairs(text, atMost: fieldLimit) where fields[name] == nil { fields[name] = value }
        return fields
    }

    /// Each `name=value` pair of a form, decoded, up to `limit` of them; nil for a pair that does not
    /// decode. One pass over the bytes, as the standard's parser splits them (on the bytes `&` and `=`;
    /// empty pairs skipped), so a body costs time in proportion to its length — and no more than `limit`
    /// pairs' worth: the pass stops there.
    private static func decodedPairs(_ text: Substring, atMost limit: Int) -> [(String, String)?] {
        var text = text
        return text.withUTF8 { bytes in
            var pairs: [(String, String)?] = []
            var start = 0
            while start <= bytes.count, pairs.count < limit {
                var end = start
                while end < bytes.count, bytes[end] != UInt8(ascii: "&") { end += 1 }
                if end > start {
                    var equals = start
                    while equals < end, bytes[equals] != UInt8(ascii: "=") { equals += 1 }
                    if let name = try? PercentEncoding.decode(bytes[start..<equals], plusIsSpace: true),
                        let value = try? PercentEncoding.decode(bytes[min(equals + 1, end)..<end], plusIsSpace: true)
                    {
                        pairs.append((name, value))
                    } else {
                        pairs.append(nil)
                    }
                }
                start = end + 1
            }
            return pairs
        }
    }


    /// Why a form body was refused by ``decodeStrictly(_:)``.
    package enum StrictDecodingError: Error, Sendable, Equatable {
        /// A field does not decode (a bad escape, bytes that are not UTF-8).
        case undecodable
        /// A name is given twice (a schema's string field, sent as a list).
        case repeated(String)
        /// More than ``FormCoding/fieldLimit`` fields.
        case tooManyFields
    }

    /// The fields of a form a schema describes (each a string): like ``decode(_:)``, but a field that
    /// does not decode, a name given twice, or more than ``fieldLimit`` fields refuse the whole form.
    package static func decodeStrictly(_ text: Substring) throws(StrictDecodingError) -> [String: String] {
        var fields: [String: String] = [:]
        let pairs = decodedPairs(text, atMost: fieldLimit + 1)
        guard pairs.count <= fieldLimit else { throw .tooManyFields }
        for pair in pairs {
            guard let (name, value) = pair else { throw .undecodable }
            guard fields.updateValue(value, forKey: name) == nil else { throw .repeated(String(name.prefix(64))) }
        }
        return fields
    }
}
