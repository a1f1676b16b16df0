/// Dynamic client registration (`POST /o/client/register`): the client credentials a software
/// statement buys, kept for ever (re-registering loses the users' profiles).
public struct V2ClientCredentials: Sendable, Hashable {
    /// The client id.
    public var clientID: String
    /// The client secret (a secret).
    public var clientSecret: String
    /// When it was issued, in epoch **seconds** (as V2 sends it).
    public var issuedAtSeconds: Int64
    /// The registered redirect URIs.
    public var redirectURIs: [String]
    /// The grant types (`client_credentials`).
    public var grantTypes: [String]
    /// The scopes (`api:client:v2`).
    public var scopes: [String]

    /// Creates credentials.
    public init(
        clientID: String, clientSecret: String, issuedAtSeconds: Int64, redirectURIs: [String] = [],
        grantTypes: [String] = ["client_credentials"], scopes: [String] = ["api:client:v2"]
    ) {
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.issuedAtSeconds = issuedAtSeconds
        self.redirectURIs = redirectURIs
        self.grantTypes = grantTypes
        self.scopes = scopes
    }

    /// Reads a registration answer.
    package init(json: JSONValue) throws(V2DecodingError) {
        let object = try V2Object(json)
        self.init(
            clientID: try object.string("client_id"), clientSecret: try object.string("client_secret"),
            issuedAtSeconds: try object.int("client_id_issued_at"), redirectURIs: try object.optionalStrings("redirect_uris") ?? [],
            grantTypes: try object.optionalStrings("grant_types") ?? [], scopes: try object.optionalStrings("scopes") ?? [])
    }

    /// The answer as V2 writes it.
    package var json: JSONValue {
        [
            "client_id": .string(clientID), "client_secret": .string(clientSecret), "client_id_issued_at": .int(issuedAtSeconds),
            "redirect_uris": .array(redirectURIs.map(JSONValue.string)), "grant_types": .array(grantTypes.map(JSONValue.string)),
            "scopes": .array(scopes.map(JSONValue.string)),
        ]
    }
}

/// `POST /o/client/token`: an access token for the `Authorization: Bearer` header, cached until it expires.
package struct V2AccessToken: Sendable, Hashable {
    /// Adobe's tracking id.
    package var id: String
    /// The bearer token (a secret).
    package var accessToken: String
    /// When it was made (epoch milliseconds).
    package var createdAt: Timestamp
    /// How long it lasts, in seconds.
    package var expiresInSeconds: Int64
    /// `bearer`.
    package var tokenType: String

    /// Creates an access token.
    package init(id: String, accessToken: String, createdAt: Timestamp, expiresInSeconds: Int64, tokenType: String = "bearer") {
        self.id = id
        self.accessToken = accessToken
        self.createdAt = createdAt
        self.expiresInSeconds = expiresInSeconds
        self.tokenType = tokenType
    }

    /// When it expires (saturating).
    package var expires: Timestamp { createdAt.adding(.seconds(expiresInSeconds)) }

    /// Reads a token answer.
    package init(json: JSONValue) throws(V2DecodingError) {
        let object = try V2Object(json)
        self.init(
            id: try object.optionalString("id") ?? "", accessToken: try object.string("access_token"),
            createdAt: try object.time("created_at"), expiresInSeconds: try object.int("expires_in"),
            tokenType: try object.optionalString("token_type") ?? "bearer")
    }

    /// The answer as V2 writes it.
    package var json: JSONValue {
        [
            "id": .string(id), "access_token": .string(accessToken), "created_at": .int(createdAt.milliseconds),
            "expires_in": .int(expiresInSeconds), "token_type": .string(tokenType),
        ]
    }
}
