import EntitlementEngine

/// Provider-chain and platform-picker inputs in a trace.
extension TraceCoding {
    // MARK: - Providers

    static func encode(_ verification: Result<ProviderView, ProviderFailure>, book: inout SecretBook) -> JSONValue {
        switch verification {
        case .success(let view):
            var members: [String: JSONValue] = ["resources": .array(view.resources.sorted().map(JSONValue.string))]
            if let message = view.message { members["message"] = .string(message) }
            return .object(members)
        case .failure(let failure):
            return ["failure": encode(failure, book: &book)]
        }
    }

    static func decodeVerification(_ value: JSONValue) throws(TraceError.Reason) -> Result<ProviderView, ProviderFailure> {
        if let failure = value["failure"] { return .failure(try decodeFailure(failure)) }
        return .success(ProviderView(resources: Set(try strings(value, "resources")), message: value["message"]?.string))
    }

    static func encode(_ failure: ProviderFailure, book: inout SecretBook) -> JSONValue {
        switch failure.kind {
        case .stepUpRequired:
            guard let advice = failure.advice else { return "stepUpRequired" }
            return ["stepUpRequired": encode(advice, book: &book)]
        case .denied: return ["denied": .string(failure.detail ?? "")]
        case .unknown: return ["unknown": .string(failure.detail ?? "")]
        case .notSaved: return ["notSaved": .string(failure.detail ?? "")]
        case .notRead: return ["notRead": .string(failure.detail ?? "")]
        default: return .string(failure.kind.description)  // the kinds that carry nothing, by name
        }
    }

    static func decodeProviderAnswer(_ record: JSONValue) throws(TraceError.Reason) -> ProviderAnswer {
        if let token = record["credentials"]?.string {
            return .credentials(.success(ProviderCredentials(token: token, keep: record["keep"] == .bool(true))))
        }
        if let failure = record["failure"] { return .credentials(.failure(try decodeFailure(failure))) }
        if let view = record["verified"] { return .verified(try decodeVerification(view)) }
        if let failure = record["verifyFailure"] { return .verified(.failure(try decodeFailure(failure))) }
        if let token = record["signedIn"]?.string { return .signedIn(.success(token)) }
        if let failure = record["signInFailure"] { return .signedIn(.failure(try decodeFailure(failure))) }
        if let token = record["renewed"]?.string { return .renewed(.success(token)) }
        if let failure = record["renewFailure"] { return .renewed(.failure(try decodeFailure(failure))) }
        if record["signedOut"] == .bool(true) { return .signedOut }
        throw .field("providerAnswered")
    }

    static func encode(_ advice: StepUpAdvice, book: inout SecretBook) -> JSONValue {
        var members: [String: JSONValue] = ["kind": .string(advice.kind.rawValue), "value": .string(advice.value)]
        if let transaction = advice.transactionID { members["transaction"] = .string(book.conceal(transaction, as: .secret)) }
        return .object(members)
    }

    static func decodeAdvice(_ value: JSONValue) throws(TraceError.Reason) -> StepUpAdvice {
        guard let kind = StepUpAdvice.Kind(rawValue: try string(value, "kind")) else { throw .field("advice") }
        return StepUpAdvice(kind: kind, value: try string(value, "value"), transactionID: value["transaction"]?.string)
    }

    static func decodeFailure(_ value: JSONValue) throws(TraceError.Reason) -> ProviderFailure {
        switch value.string {
        case "networkFailure": return .networkFailure
        case "unavailable": return .unavailable
        case "subscriptionExpired": return .subscriptionExpired
        case "cancelledByUser": return .cancelledByUser
        case "invalidToken": return .invalidToken
        default:
            if let message = value["denied"]?.string { return .denied(message) }
            if let advice = value["stepUpRequired"] { return .stepUpRequired(try decodeAdvice(advice)) }
            if let reason = value["notSaved"]?.string { return .notSaved(reason) }
            if let reason = value["notRead"]?.string { return .notRead(reason) }
            guard let underlying = value["unknown"]?.string else { throw .field("failure") }
            return .unknown(underlying)
        }
    }

    /// A request to a provider of the chain, as an output record (what the user typed to sign in is
    /// never written: only the names of its fields).
    static func encodeProviderRequest(_ operation: OperationID, provider: String, _ request: ProviderRequest, seq: Int) -> JSONValue {
        var record: [String: JSONValue] = [
            "seq": .int(Int64(seq)), "out": "provider", "op": .int(Int64(truncatingIfNeeded: operation.rawValue)),
            "provider": .string(provider), "request": .string(request.name),
        ]
        switch request {
        case .credentials(let resource): record["resource"] = .string(resource)
        case .signIn(let fields): record["fields"] = .array(fields.keys.sorted().map(JSONValue.string))
        case .verify, .renew, .signOut: break
        }
        return .object(record)
    }

    // MARK: - Platform picker

    static func encode(_ answer: PlatformPickerAnswer, book: inout SecretBook) -> JSONValue {
        switch answer {
        case .signedIn(let assertion): ["signedIn": encode(assertion, book: &book)]
        case .otherProviders: ["otherProviders": true]
        case .unsupportedProvider(let mvpd): ["unsupportedProvider": .string(mvpd)]
        case .cancelled: ["cancelled": true]
        }
    }

    static func decodePickerAnswer(_ value: JSONValue) throws(TraceError.Reason) -> PlatformPickerAnswer {
        guard let members = value.object, members.count == 1, let (kind, body) = members.first else { throw .field("answer") }
        switch kind {
        case "signedIn": return .signedIn(try decodeAssertion(body))
        case "otherProviders": return .otherProviders
        case "unsupportedProvider":
            guard let mvpd = body.string else { throw .field("unsupportedProvider") }
            return .unsupportedProvider(mvpd)
        case "cancelled": return .cancelled
        default: throw .field("answer")
        }
    }

    static func encode(_ assertion: PlatformAssertion, book: inout SecretBook) -> JSONValue {
        ["mvpd": .string(assertion.mvpdID), "serialized": .string(book.conceal(assertion.serialized, as: .assertion))]
    }

    static func decodeAssertion(_ value: JSONValue) throws(TraceError.Reason) -> PlatformAssertion {
        PlatformAssertion(mvpdID: try string(value, "mvpd"), serialized: try string(value, "serialized"))
    }
}
