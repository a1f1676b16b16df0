/// What a partner single sign-on session hands the partner framework (Apple's video-subscriber
/// account framework): the SAML request it answers with the device's sign-in (REST API V2 §8,
/// `authenticationRequest` of `POST sessions/sso/{partner}`). The framework's signed answer is then
/// exchanged at `profiles/sso/{partner}`.
public struct V2PartnerRequest: Sendable, Hashable {
    /// The request's kind (`saml`).
    public var type: String
    /// The request itself, as Adobe sends it (Base64 SAML `AuthnRequest`).
    public var request: String
    /// The user attributes the partner's answer should carry (`attributesNames`).
    public var attributeNames: [String]

    /// Creates a partner request.
    public init(type: String, request: String, attributeNames: [String]) {
        self.type = type
        self.request = request
        self.attributeNames = attributeNames
    }

    /// Reads an `authenticationRequest` object.
    init(_ object: V2Object) throws(V2DecodingError) {
        self.init(
            type: try object.string("type"), request: try object.string("request"),
            attributeNames: try object.optionalStrings("attributesNames") ?? [])
    }

    /// The request as V2 writes it.
    package var json: JSONValue {
        ["type": .string(type), "request": .string(request), "attributesNames": .array(attributeNames.map(JSONValue.string))]
    }
}
