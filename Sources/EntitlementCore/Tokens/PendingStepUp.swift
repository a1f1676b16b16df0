/// An authorization waiting for the app's step-up, kept in storage so that the app's `completeStepUp`
/// finishes it on whichever instance it reaches, and the retry's outcome reaches every instance with a
/// call waiting for it. Holds secrets (the transaction id, a media token): storage must be private.
package struct PendingStepUp: Sendable, Hashable {
    /// Where the step-up is.
    package enum Phase: Sendable, Hashable {
        /// Waits for the app's `completeStepUp`.
        case awaiting
        /// An instance took the app's `completeStepUp` and asks again with the transaction (used once).
        case completing
        /// Ended: what every waiting call is answered (a media token, or a failure).
        case answered(Outcome)
    }

    /// How a step-up ended, as its calls are answered.
    package enum Outcome: Sendable, Hashable {
        /// `setToken` with this media token (a secret).
        case token(String)
        /// `tokenRequestFailed` with this code and description.
        case failed(code: String, description: String)
    }

    /// The resource being authorized.
    package var resource: String
    /// The `data` of the authorization (with the resource, the request's identity).
    package var data: [String: String]
    /// The provider of the chain that asked for the step-up (``ProviderLink/tvProviderID`` for the TV
    /// provider's re-authentication).
    package var provider: String
    /// The provider's advice (its transaction id is a secret).
    package var advice: StepUpAdvice
    /// Where the step-up is.
    package var phase: Phase
    /// When the record stops standing: the step-up's deadline while it waits for the app, the retry's
    /// longest wait while an instance completes it, a short while after its answer.
    package var expires: Timestamp

    /// Creates a record.
    package init(resource: String, data: [String: String], provider: String, advice: StepUpAdvice, phase: Phase, expires: Timestamp) {
        self.resource = resource
        self.data = data
        self.provider = provider
        self.advice = advice
        self.phase = phase
        self.expires = expires
    }

    /// Whether the record is that of the authorization of `resource` with `data`.
    package func isFor(_ resource: String, _ data: [String: String]) -> Bool { self.resource == resource && self.data == data }

    /// Whether the step-up has no outcome yet.
    package var isUnanswered: Bool {
        if case .answered = phase { return false }
        return true
    }

    /// Whether a call may still wait for this step-up's outcome: it has none yet and stands at `now`.
    package func isOpen(at now: Timestamp) -> Bool { isUnanswered && expires > now }
}

extension PendingStepUp: Codable {
    private enum CodingKeys: String, CodingKey {
        case resource, data, provider, adviceKind, adviceValue, transactionID, phase, token, errorCode, errorDescription, expires
    }

    /// Decodes a record; one of a phase this version does not know is a failure (``StoredTokens`` drops it).
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        resource = try container.decode(String.self, forKey: .resource)
        data = try container.decodeIfPresent([String: String].self, forKey: .data) ?? [:]
        provider = try container.decode(String.self, forKey: .provider)
        let kind = try container.decode(String.self, forKey: .adviceKind)
        guard let adviceKind = StepUpAdvice.Kind(rawValue: kind) else {
            throw DecodingError.dataCorruptedError(forKey: .adviceKind, in: container, debugDescription: "unknown advice kind '\(kind)'")
        }
        advice = StepUpAdvice(
            kind: adviceKind, value: try container.decode(String.self, forKey: .adviceValue),
            transactionID: try container.decodeIfPresent(String.self, forKey: .transactionID))
        expires = try container.decode(Timestamp.self, forKey: .expires)
        switch try container.decode(String.self, forKey: .phase) {
        case "awaiting": phase = .awaiting
        case "completing": phase = .completing
        case "answered" where container.contains(.token): phase = .answered(.token(try container.decode(String.self, forKey: .token)))
        case "answered":
            phase = .answered(
                .failed(
                    code: try container.decode(String.self, forKey: .errorCode),
                    description: try container.decode(String.self, forKey: .errorDescription)))
        case let other:
            throw DecodingError.dataCorruptedError(forKey: .phase, in: container, debugDescription: "unknown step-up phase '\(other)'")
        }
    }

    /// Encodes the record.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(resource, forKey: .resource)
        if !data.isEmpty { try container.encode(data, forKey: .data) }
        try container.encode(provider, forKey: .provider)
        try container.encode(advice.kind.rawValue, forKey: .adviceKind)
        try container.encode(advice.value, forKey: .adviceValue)
        try container.encodeIfPresent(advice.transactionID, forKey: .transactionID)
        try container.encode(expires, forKey: .expires)
        switch phase {
        case .awaiting: try container.encode("awaiting", forKey: .phase)
        case .completing: try container.encode("completing", forKey: .phase)
        case .answered(.token(let token)):
            try container.encode("answered", forKey: .phase)
            try container.encode(token, forKey: .token)
        case .answered(.failed(let code, let description)):
            try container.encode("answered", forKey: .phase)
            try container.encode(code, forKey: .errorCode)
            try container.encode(description, forKey: .errorDescription)
        }
    }
}
