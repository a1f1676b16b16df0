import EntitlementEngine

/// Calls and callbacks in a trace.
extension TraceCoding {
    // MARK: - Calls

    static func encode(_ call: EntitlementCall, book: inout SecretBook) -> [String: JSONValue] {
        var fields: [String: JSONValue] = ["call": .string(call.name)]
        switch call {
        case .setRequestor(let requestor, let providers):
            fields["requestor"] = .string(requestor)
            fields["serviceProviders"] = .array(providers.map(JSONValue.string))
        case .checkAuthentication, .getSelectedProvider, .logout:
            break
        case .getAuthentication(let force, let data):
            fields["forceAuthn"] = .bool(force)
            fields["data"] = .object(data.mapValues(JSONValue.string))
        case .setSelectedProvider(let mvpd):
            fields["mvpd"] = mvpd.map(JSONValue.string) ?? .null
        case .handleExternalURL(let url):
            // An over-long URL is refused for its length alone: keep just enough of it to be refused alike.
            let kept = url.utf8.count > ExternalURL.maximumLength
                ? String(decoding: url.utf8.prefix(ExternalURL.maximumLength + 16), as: UTF8.self) : url
            fields["url"] = .string(book.concealURL(kept))
        case .checkAuthorization(let resource, let data), .getAuthorization(let resource, let data):
            fields["resource"] = .string(resource)
            fields["data"] = .object(data.mapValues(JSONValue.string))
        case .checkPreauthorizedResources(let resources, let cache):
            fields["resources"] = .array(resources.map(JSONValue.string))
            fields["cache"] = .bool(cache)
        case .getMetadata(let key):
            fields["key"] = encode(key)
        case .signIn(let provider, let credentials):
            fields["provider"] = .string(provider)
            // Concealed in key order, so the placeholders are numbered alike in every recording.
            var concealed: [String: JSONValue] = [:]
            for (key, value) in credentials.sorted(by: { $0.key < $1.key }) { concealed[key] = .string(book.conceal(value, as: .secret)) }
            fields["credentials"] = .object(concealed)
        case .signOut(let provider):
            fields["provider"] = .string(provider)
        case .completeStepUp(let resource, let succeeded):
            fields["resource"] = .string(resource)
            fields["succeeded"] = .bool(succeeded)
        }
        return fields
    }

    static func decodeCall(_ record: JSONValue) throws(TraceError.Reason) -> EntitlementCall {
        switch try string(record, "call") {
        case "setRequestor":
            return .setRequestor(requestorID: try string(record, "requestor"), serviceProviders: try strings(record, "serviceProviders"))
        case "checkAuthentication": return .checkAuthentication
        case "getSelectedProvider": return .getSelectedProvider
        case "logout": return .logout
        case "getAuthentication":
            return .getAuthentication(forceAuthn: try bool(record, "forceAuthn"), data: try stringMap(record, "data"))
        case "setSelectedProvider":
            let mvpd = try member(record, "mvpd")
            return .setSelectedProvider(mvpd == .null ? nil : try string(record, "mvpd"))
        case "handleExternalURL":
            return .handleExternalURL(SecretBook.encodePlaceholders(inURL: try string(record, "url")))
        case "checkAuthorization":
            return .checkAuthorization(resource: try string(record, "resource"), data: try stringMap(record, "data"))
        case "getAuthorization":
            return .getAuthorization(resource: try string(record, "resource"), data: try stringMap(record, "data"))
        case "checkPreauthorizedResources":
            return .checkPreauthorizedResources(try strings(record, "resources"), cache: try bool(record, "cache"))
        case "getMetadata": return .getMetadata(try decodeKey(try member(record, "key")))
        case "signIn": return .signIn(provider: try string(record, "provider"), credentials: try stringMap(record, "credentials"))
        case "signOut": return .signOut(provider: try string(record, "provider"))
        case "completeStepUp": return .completeStepUp(resource: try string(record, "resource"), succeeded: try bool(record, "succeeded"))
        default: throw .field("call")
        }
    }

    static func encode(_ key: MetadataKey) -> JSONValue {
        switch key {
        case .authenticationExpiry: ["key": "TTL_AUTHN"]
        case .authorizationExpiry(let resource): ["key": "TTL_AUTHZ", "resource": .string(resource)]
        case .deviceID: ["key": "DEVICEID"]
        case .userMetadata(let name): ["key": "USER_META", "name": .string(name)]
        }
    }

    static func decodeKey(_ value: JSONValue) throws(TraceError.Reason) -> MetadataKey {
        switch try string(value, "key") {
        case "TTL_AUTHN": return .authenticationExpiry
        case "TTL_AUTHZ": return .authorizationExpiry(resource: try string(value, "resource"))
        case "DEVICEID": return .deviceID
        case "USER_META": return .userMetadata(try string(value, "name"))
        default: throw .field("key")
        }
    }

    // MARK: - Callbacks

    static func encode(_ callback: Callback, answering: [CallID], seq: Int, book: inout SecretBook) -> JSONValue {
        var record: [String: JSONValue] = [
            "seq": .int(Int64(seq)), "out": "callback", "callback": .string(callback.name),
            "answers": .array(answering.map { .int(Int64(truncatingIfNeeded: $0.rawValue)) }),
        ]
        switch callback {
        case .setRequestorComplete(let success): record["success"] = .bool(success)
        case .displayProviderDialog(let mvpds): record["mvpds"] = .array(mvpds.map(encode))
        case .setAuthenticationStatus(let status, let code):
            record["status"] = .int(Int64(status))
            record["errorCode"] = .string(code)
        case .navigateToUrl(let url): record["url"] = .string(book.concealURL(url))
        case .sendTrackingData(let event, var data):
            if let field = event.userGUIDField, data.indices.contains(field) { data[field] = book.concealPersonal(data[field]) }
            record["event"] = .string(event.rawValue)
            record["data"] = .array(data.map(JSONValue.string))
        case .setToken(let token, let resource):
            record["token"] = .string(book.conceal(token, as: .media))
            record["resource"] = .string(resource)
        case .tokenRequestFailed(let resource, let code, let description):
            record["resource"] = .string(resource)
            record["errorCode"] = .string(code)
            record["errorDescription"] = .string(description)
        case .selectedProvider(let mvpd): record["mvpd"] = mvpd.map(encode) ?? .null
        case .setMetadataStatus(let value, let encrypted, let key):
            record["metadata"] = value.map { encode(concealing($0, of: key, book: &book)) } ?? .null
            record["encrypted"] = .bool(encrypted)
            record["key"] = encode(key)
        case .preauthorizedResources(let resources): record["resources"] = .array(resources.map(JSONValue.string))
        case .presentTvProviderDialog(let dialog), .dismissTvProviderDialog(let dialog):
            record["dialog"] = ["id": .string(dialog.id), "mvpds": .array(dialog.mvpds.map(encode))]
        case .status(let report):
            record["code"] = .string(report.code)
            record["level"] = .string(report.level.rawValue)
            // The registration code (the session's code) is the message of REGCODE: a secret like any code.
            record["message"] = .string(report.code == "REGCODE" ? book.conceal(report.message, as: .code) : report.message)
        case .entitlementsChanged(let providers): record["providers"] = .array(providers.map(JSONValue.string))
        case .providerSignInStatus(let provider, let signedIn, let code, let message):
            record["provider"] = .string(provider)
            record["signedIn"] = .bool(signedIn)
            record["errorCode"] = .string(code)
            record["message"] = .string(message)
        case .stepUpRequired(let resource, let advice):
            record["resource"] = .string(resource)
            record["advice"] = encode(advice, book: &book)
        }
        return .object(record)
    }
}
