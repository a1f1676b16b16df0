import EntitlementEngine

/// Configurations, tokens and stored values in a trace.
extension TraceCoding {
    // MARK: - Configuration and tokens

    static func encode(_ mvpd: MVPD) -> JSONValue {
        var members: [String: JSONValue] = [
            "id": .string(mvpd.id), "displayName": .string(mvpd.displayName), "logoURL": .string(mvpd.logoURL),
            "enablePlatformServices": .bool(mvpd.enablePlatformServices),
        ]
        // Flags written only when set, so traces of regular MVPDs read as before.
        if mvpd.isTempPass { members["isTempPass"] = true }
        if mvpd.authenticationPerRequestor { members["authenticationPerRequestor"] = true }
        return .object(members)
    }

    static func decodeMVPD(_ value: JSONValue) throws(TraceError.Reason) -> MVPD {
        MVPD(
            id: try string(value, "id"), displayName: try string(value, "displayName"), logoURL: try string(value, "logoURL"),
            enablePlatformServices: try bool(value, "enablePlatformServices"), isTempPass: value["isTempPass"] == .bool(true),
            authenticationPerRequestor: value["authenticationPerRequestor"] == .bool(true))
    }

    static func encode(_ configuration: RequestorConfiguration) -> JSONValue {
        ["requestor": .string(configuration.requestorID), "mvpds": .array(configuration.mvpds.map(encode))]
    }

    static func decodeConfiguration(_ value: JSONValue) throws(TraceError.Reason) -> RequestorConfiguration {
        guard let mvpds = value["mvpds"]?.array else { throw .field("mvpds") }
        return RequestorConfiguration(
            requestorID: try string(value, "requestor"),
            mvpds: try mvpds.map { item throws(TraceError.Reason) in try decodeMVPD(item) })
    }

    static func encode(_ token: AuthenticationToken, book: inout SecretBook) -> JSONValue {
        var members: [String: JSONValue] = [
            "mvpd": .string(token.mvpdID), "requestor": .string(token.requestorID), "userID": .string(book.concealPersonal(token.userID)),
            "expires": .int(token.expires.milliseconds),
        ]
        // The source and metadata are written only when there are some.
        if token.source != .mvpdLogin { members["source"] = .string(token.source.rawValue) }
        if !token.metadata.isEmpty {
            // Concealed in name order, so the placeholders are numbered alike in every recording.
            var metadata: [String: JSONValue] = [:]
            for (name, value) in token.metadata.sorted(by: { $0.key < $1.key }) {
                metadata[name] = encode(concealing(value, of: .userMetadata(name), book: &book))
            }
            members["metadata"] = .object(metadata)
        }
        if let sessionID = token.sessionID { members["sessionID"] = .string(book.concealPersonal(sessionID)) }
        if !token.encryptedMetadata.isEmpty {
            members["encryptedMetadata"] = .array(token.encryptedMetadata.sorted().map(JSONValue.string))
        }
        return .object(members)
    }

    static func decodeAuthentication(_ value: JSONValue) throws(TraceError.Reason) -> AuthenticationToken {
        var metadata: [String: MetadataValue] = [:]
        if let members = value["metadata"] {
            guard let object = members.object else { throw .field("metadata") }
            for (name, item) in object { metadata[name] = try decodeMetadata(item) }
        }
        return AuthenticationToken(
            mvpdID: try string(value, "mvpd"), requestorID: try string(value, "requestor"),
            userID: try string(value, "userID"), expires: Timestamp(milliseconds: try int(value, "expires")),
            source: try decodeSource(value["source"]), metadata: metadata,
            encryptedMetadata: Set(value["encryptedMetadata"] == nil ? [] : try strings(value, "encryptedMetadata")),
            sessionID: value["sessionID"]?.string)
    }

    static func decodeSource(_ value: JSONValue?) throws(TraceError.Reason) -> AuthenticationSource {
        guard let value else { return .mvpdLogin }
        guard let raw = value.string, let source = AuthenticationSource(rawValue: raw) else { throw .field("source") }
        return source
    }

    static func encode(_ stored: StoredTokens, book: inout SecretBook) -> JSONValue {
        var record: [String: JSONValue] = [
            "authentication": stored.authentication.map { encode($0, book: &book) } ?? .null,
            "selectedProvider": stored.selectedProvider.map(JSONValue.string) ?? .null,
            "device": stored.deviceID.map { .string(book.concealPersonal($0, as: .device)) } ?? .null,
            "pendingLogin": stored.pendingLogin.map { pending in
                var record: [String: JSONValue] = [
                    "mvpd": .string(pending.mvpdID), "state": .string(book.conceal(pending.state, as: .state)),
                    "code": .string(book.conceal(pending.code, as: .code)),
                    "deadline": .int(pending.deadline.milliseconds), "data": .object(pending.data.mapValues(JSONValue.string)),
                ]
                // Written only when known, so other traces read as before.
                if let url = pending.url { record["url"] = .string(book.concealURL(url)) }
                if pending.completing { record["completing"] = .bool(true) }
                return .object(record)
            } ?? .null,
        ]
        // Written only when there is one (or some), so other traces read as before.
        if let logout = stored.pendingLogout {
            record["pendingLogout"] = [
                "state": .string(book.conceal(logout.state, as: .state)), "deadline": .int(logout.deadline.milliseconds),
                "mvpd": logout.mvpdID.map(JSONValue.string) ?? .null,
            ]
        }
        if let registration = stored.pendingRegistration {
            record["pendingRegistration"] = [
                "mvpd": .string(registration.mvpdID), "code": .string(book.conceal(registration.code, as: .code)),
                "expires": .int(registration.expires.milliseconds),
            ]
        }
        if !stored.pendingStepUps.isEmpty {
            record["pendingStepUps"] = .array(stored.pendingStepUps.map { encode($0, book: &book) })
        }
        if let loggedOut = stored.loggedOut { record["loggedOut"] = .int(loggedOut.milliseconds) }
        guard !stored.providerAccounts.isEmpty else { return .object(record) }
        // Concealed in key order, so the placeholders are numbered alike in every recording.
        var accounts: [String: JSONValue] = [:]
        for (provider, account) in stored.providerAccounts.sorted(by: { $0.key < $1.key }) {
            var kept: [String: JSONValue] = [:]
            for (resource, credentials) in account.kept.sorted(by: { $0.key < $1.key }) {
                kept[resource] = .string(book.conceal(credentials, as: .media))
            }
            var record: [String: JSONValue] = [
                "userToken": account.userToken.map { .string(book.conceal($0, as: .secret)) } ?? .null, "kept": .object(kept),
            ]
            // Written only while a renewal is marked, so other traces read as before.
            if let until = account.renewingUntil { record["renewingUntil"] = .int(until.milliseconds) }
            accounts[provider] = .object(record)
        }
        record["providerAccounts"] = .object(accounts)
        return .object(record)
    }

    static func decodeStored(_ value: JSONValue) throws(TraceError.Reason) -> StoredTokens {
        let authentication = try member(value, "authentication")
        let selected = try member(value, "selectedProvider")
        var accounts: [String: ProviderAccount] = [:]
        for (provider, account) in value["providerAccounts"]?.object ?? [:] {
            let token = try member(account, "userToken")
            var read = ProviderAccount(userToken: token == .null ? nil : try string(account, "userToken"), kept: try stringMap(account, "kept"))
            if account["renewingUntil"] != nil { read.renewingUntil = Timestamp(milliseconds: try int(account, "renewingUntil")) }
            accounts[provider] = read
        }
        return StoredTokens(
            authentication: authentication == .null ? nil : try decodeAuthentication(authentication),
            selectedProvider: selected == .null ? nil : try string(value, "selectedProvider"), deviceID: value["device"]?.string,
            pendingLogin: try decodePending(value["pendingLogin"] ?? .null),
            pendingLogout: try decodePendingLogout(value["pendingLogout"] ?? .null), providerAccounts: accounts,
            pendingRegistration: try decodePendingRegistration(value["pendingRegistration"] ?? .null),
            pendingStepUps: try (value["pendingStepUps"]?.array ?? []).map { (item) throws(TraceError.Reason) in try decodeStepUp(item) },
            loggedOut: value["loggedOut"] == nil ? nil : Timestamp(milliseconds: try int(value, "loggedOut")))
    }

    /// A stored step-up, its transaction id and media token concealed.
    static func encode(_ stepUp: PendingStepUp, book: inout SecretBook) -> JSONValue {
        var record: [String: JSONValue] = [
            "resource": .string(stepUp.resource), "data": .object(stepUp.data.mapValues(JSONValue.string)), "provider": .string(stepUp.provider),
            "adviceKind": .string(stepUp.advice.kind.rawValue), "adviceValue": .string(stepUp.advice.value),
            "expires": .int(stepUp.expires.milliseconds),
        ]
        if let transaction = stepUp.advice.transactionID { record["transaction"] = .string(book.conceal(transaction, as: .secret)) }
        switch stepUp.phase {
        case .awaiting: record["phase"] = "awaiting"
        case .completing: record["phase"] = "completing"
        case .answered(.token(let token)):
            record["phase"] = "answered"
            record["token"] = .string(book.conceal(token, as: .media))
        case .answered(.failed(let code, let description)):
            record["phase"] = "answered"
            record["errorCode"] = .string(code)
            record["errorDescription"] = .string(description)
        }
        return .object(record)
    }

    static func decodeStepUp(_ value: JSONValue) throws(TraceError.Reason) -> PendingStepUp {
        guard let kind = StepUpAdvice.Kind(rawValue: try string(value, "adviceKind")) else { throw .field("adviceKind") }
        let phase: PendingStepUp.Phase
        switch try string(value, "phase") {
        case "awaiting": phase = .awaiting
        case "completing": phase = .completing
        case "answered" where value["token"] != nil: phase = .answered(.token(try string(value, "token")))
        case "answered": phase = .answered(.failed(code: try string(value, "errorCode"), description: try string(value, "errorDescription")))
        default: throw .field("phase")
        }
        return PendingStepUp(
            resource: try string(value, "resource"), data: try stringMap(value, "data"), provider: try string(value, "provider"),
            advice: StepUpAdvice(kind: kind, value: try string(value, "adviceValue"), transactionID: value["transaction"]?.string),
            phase: phase, expires: Timestamp(milliseconds: try int(value, "expires")))
    }

    static func decodePendingRegistration(_ value: JSONValue) throws(TraceError.Reason) -> PendingRegistration? {
        guard value != .null else { return nil }
        return PendingRegistration(
            mvpdID: try string(value, "mvpd"), code: try string(value, "code"), expires: Timestamp(milliseconds: try int(value, "expires")))
    }

    static func decodePendingLogout(_ value: JSONValue) throws(TraceError.Reason) -> PendingLogout? {
        guard value != .null else { return nil }
        return PendingLogout(
            state: try string(value, "state"), deadline: Timestamp(milliseconds: try int(value, "deadline")), mvpdID: value["mvpd"]?.string)
    }

    static func decodePending(_ value: JSONValue) throws(TraceError.Reason) -> PendingLogin? {
        guard value != .null else { return nil }
        return PendingLogin(
            mvpdID: try string(value, "mvpd"), state: try string(value, "state"), code: try string(value, "code"),
            deadline: Timestamp(milliseconds: try int(value, "deadline")), data: try stringMap(value, "data"),
            url: value["url"]?.string, completing: value["completing"]?.bool ?? false)
    }

    /// A metadata answer for `key` with its personal data concealed: the device's id and the user's
    /// metadata are; the expiry times are not.
    static func concealing(_ value: MetadataValue, of key: MetadataKey, book: inout SecretBook) -> MetadataValue {
        let kind: SecretBook.Kind
        switch key {
        case .authenticationExpiry, .authorizationExpiry: return value
        case .deviceID: kind = .device
        case .userMetadata: kind = .personal
        }
        switch value {
        case .text(let text): return .text(book.concealPersonal(text, as: kind))
        case .list(let items): return .list(items.map { book.concealPersonal($0, as: kind) })
        }
    }

    /// A profile attribute's value with its personal data concealed, shaped as its metadata will be
    /// (``AuthenticationToken/metadataValue(_:)``): a text, a list of texts, or any other value as one
    /// text — so a replayed profile gives the metadata the recorded one gave.
    static func concealing(_ value: JSONValue, book: inout SecretBook) -> JSONValue {
        guard !book.keepsPersonalData else { return value }
        switch value {
        case .null: return .null
        case .string(let text): return .string(book.concealPersonal(text))
        case .array(let items) where items.allSatisfy({ $0.string != nil }):
            return .array(items.map { .string(book.concealPersonal($0.string ?? "")) })
        default: return .string(book.concealPersonal(value.canonicalText))
        }
    }

    static func encode(_ value: MetadataValue) -> JSONValue {
        switch value {
        case .text(let text): .string(text)
        case .list(let items): .array(items.map(JSONValue.string))
        }
    }

    static func decodeMetadata(_ value: JSONValue) throws(TraceError.Reason) -> MetadataValue {
        if let text = value.string { return .text(text) }
        if let items = value.array { return .list(items.compactMap(\.string)) }
        throw .field("metadata")
    }
}
