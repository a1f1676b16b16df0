import EntitlementEngine

/// `application/x-www-form-urlencoded` text (a POST body or a query) read into fields: `+` is a
/// space, percent-escapes are decoded, a field that does not decode is dropped, the first of a
/// repeated name wins.
enum FormFields {
    static func parse(_ text: Substring) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let plus = { (part: Substring) in Substring(part.map { $0 == "+" ? " " : $0 }) }
            guard let name = try? PercentEncoding.decode(plus(parts[0])),
                let value = try? PercentEncoding.decode(plus(parts.count > 1 ? parts[1] : ""))
            else { continue }
            if fields[name] == nil { fields[name] = value }
        }
        return fields
    }
}
