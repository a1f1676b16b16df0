/// A JSON object of a V2 answer being read, with its path for errors. Fields the engine does not
/// know are ignored; a required field that is missing or of the wrong type is a ``V2DecodingError``.
struct V2Object {
    let members: [String: JSONValue]
    let path: String

    init(_ value: JSONValue, path: String = "$") throws(V2DecodingError) {
        guard let members = value.object else { throw V2DecodingError(path: path, reason: "not an object") }
        self.members = members
        self.path = path
    }

    /// Reads `text` as JSON and its top level as an object.
    static func read(_ text: String) throws(V2DecodingError) -> V2Object {
        let value: JSONValue
        do throws(JSONReader.Failure) {
            value = try JSONReader.read(text)
        } catch {
            throw V2DecodingError(path: "$", reason: "not JSON: \(error.description)")
        }
        return try V2Object(value)
    }

    func at(_ key: String) -> String { "\(path).\(key)" }

    private func value(_ key: String) -> JSONValue? {
        guard let value = members[key], value != .null else { return nil }
        return value
    }

    private func required<T>(_ key: String, _ what: String, _ read: (JSONValue) -> T?) throws(V2DecodingError) -> T {
        guard let raw = value(key) else { throw V2DecodingError(path: at(key), reason: "missing") }
        guard let typed = read(raw) else { throw V2DecodingError(path: at(key), reason: "not \(what)") }
        return typed
    }

    private func optional<T>(_ key: String, _ what: String, _ read: (JSONValue) -> T?) throws(V2DecodingError) -> T? {
        guard let raw = value(key) else { return nil }
        guard let typed = read(raw) else { throw V2DecodingError(path: at(key), reason: "not \(what)") }
        return typed
    }

    func string(_ key: String) throws(V2DecodingError) -> String { try required(key, "a string") { $0.string } }
    func optionalString(_ key: String) throws(V2DecodingError) -> String? { try optional(key, "a string") { $0.string } }
    func int(_ key: String) throws(V2DecodingError) -> Int64 { try required(key, "an integer") { $0.int } }
    func optionalInt(_ key: String) throws(V2DecodingError) -> Int64? { try optional(key, "an integer") { $0.int } }
    func bool(_ key: String) throws(V2DecodingError) -> Bool { try required(key, "true or false") { $0.bool } }
    func optionalBool(_ key: String) throws(V2DecodingError) -> Bool? { try optional(key, "true or false") { $0.bool } }

    func strings(_ key: String) throws(V2DecodingError) -> [String] {
        try required(key, "a list of strings") { value in value.array.flatMap { items in items.allSatisfy { $0.string != nil } ? items.compactMap(\.string) : nil } }
    }

    func optionalStrings(_ key: String) throws(V2DecodingError) -> [String]? {
        try optional(key, "a list of strings") { value in value.array.flatMap { items in items.allSatisfy { $0.string != nil } ? items.compactMap(\.string) : nil } }
    }

    func object(_ key: String) throws(V2DecodingError) -> V2Object {
        try V2Object(try required(key, "an object") { $0.object != nil ? $0 : nil }, path: at(key))
    }

    func optionalObject(_ key: String) throws(V2DecodingError) -> V2Object? {
        guard let raw = try optional(key, "an object", { $0.object != nil ? $0 : nil }) else { return nil }
        return try V2Object(raw, path: at(key))
    }

    /// Each element of the array at `key`, read as an object.
    func objects(_ key: String) throws(V2DecodingError) -> [V2Object] {
        let items = try required(key, "a list") { $0.array }
        var objects: [V2Object] = []
        for (index, item) in items.enumerated() { objects.append(try V2Object(item, path: "\(at(key))[\(index)]")) }
        return objects
    }

    /// Each member of the object at `key`, read as an object, by name.
    func objectMap(_ key: String) throws(V2DecodingError) -> [String: V2Object] {
        let members = try required(key, "an object") { $0.object }
        var objects: [String: V2Object] = [:]
        for (name, member) in members { objects[name] = try V2Object(member, path: "\(at(key)).\(name)") }
        return objects
    }

    /// A value from a set V2 may grow (`actionName`, `source`, …): an unknown one is kept as sent.
    func openValue<Value: V2OpenValue>(_ key: String) throws(V2DecodingError) -> Value { Value(rawValue: try string(key)) }

    /// Epoch milliseconds sent as a JSON number.
    func time(_ key: String) throws(V2DecodingError) -> Timestamp { Timestamp(milliseconds: try int(key)) }

    func optionalTime(_ key: String) throws(V2DecodingError) -> Timestamp? { try optionalInt(key).map { Timestamp(milliseconds: $0) } }

    /// Epoch milliseconds sent as a JSON string (sessions do this).
    func optionalStringTime(_ key: String) throws(V2DecodingError) -> Timestamp? {
        guard let text = try optionalString(key) else { return nil }
        guard let milliseconds = Int64(text), text.first != "+" else {
            throw V2DecodingError(path: at(key), reason: "'\(text.prefix(32))' is not epoch milliseconds")
        }
        return Timestamp(milliseconds: milliseconds)
    }
}

extension Dictionary where Key == String, Value == JSONValue {
    /// Sets `key` only when `value` is present (optional V2 fields are left out, not written as null).
    mutating func set(_ key: String, _ value: JSONValue?) {
        if let value { self[key] = value }
    }
}
