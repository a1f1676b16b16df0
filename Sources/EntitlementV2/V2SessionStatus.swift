/// What `GET sessions/{code}` says of a session (REST API V2 §4.3): the parameters it holds and lacks,
/// and how long its code is valid. A second screen checks a typed code with it; the engine asks it
/// when a poll of its code is refused, to tell an expired code from a pending one.
package struct V2SessionStatus: Sendable, Hashable {
    /// The parameters the session holds (`mvpd`, `domainName`, `redirectUrl`, `serviceProvider`).
    package var existingParameters: [String: String]
    /// The parameters it still lacks.
    package var missingParameters: [String]
    /// When the code becomes valid (sent as a string of epoch milliseconds).
    package var notBefore: Timestamp?
    /// When the code stops being valid.
    package var notAfter: Timestamp?

    /// Creates a session status.
    package init(
        existingParameters: [String: String], missingParameters: [String] = [], notBefore: Timestamp? = nil,
        notAfter: Timestamp? = nil
    ) {
        self.existingParameters = existingParameters
        self.missingParameters = missingParameters
        self.notBefore = notBefore
        self.notAfter = notAfter
    }

    /// Reads a session status (the `device` description is not read: it describes the streaming
    /// device, which the engine is talking for).
    package init(json: JSONValue) throws(V2DecodingError) {
        let object = try V2Object(json)
        var existing: [String: String] = [:]
        if let parameters = try object.optionalObject("existingParameters") {
            for (name, value) in parameters.members {
                guard let text = value.string else {
                    throw V2DecodingError(path: parameters.at(name), reason: "not a string")
                }
                existing[name] = text
            }
        }
        self.init(
            existingParameters: existing, missingParameters: try object.optionalStrings("missingParameters") ?? [],
            notBefore: try object.optionalStringTime("notBefore"), notAfter: try object.optionalStringTime("notAfter"))
    }

    /// The status as V2 writes it.
    package var json: JSONValue {
        var members: [String: JSONValue] = [
            "existingParameters": .object(existingParameters.mapValues(JSONValue.string)),
            "missingParameters": .array(missingParameters.map(JSONValue.string)),
        ]
        members.set("notBefore", notBefore.map { .string(String($0.milliseconds)) })
        members.set("notAfter", notAfter.map { .string(String($0.milliseconds)) })
        return .object(members)
    }
}
