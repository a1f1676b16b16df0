import EntitlementEngine
import EntitlementSupport

/// What the programmer's authorization service answers: an HTTP answer, or none at all (the
/// connection drops).
package enum ProgrammerAnswer: Sendable, Hashable {
    /// An HTTP answer.
    case http(status: Int, contentType: String, body: [UInt8])
    /// No answer: the connection resets.
    case noAnswer
}

/// How the programmer's service misbehaves on its next answers (`! server ID answers …`).
package enum ProgrammerFault: Sendable, Hashable {
    /// A bare status with a text body.
    case status(Int)
    /// 200 with a body that is not JSON.
    case garbage
    /// 200 with JSON that is not an object (an array).
    case notAnObject
    /// No answer: the connection resets.
    case noAnswer
}

extension Simulator {
    /// The programmer's own authorization service behind a server-based authorization provider
    /// (libPusher's server-based channel authorization): a form with `device_id`, `session_id` and
    /// `resource`. It answers 200 with a JSON object for a resource the world's server `serverID` grants
    /// (an `auth` value signed for that device, session and resource), 403 with its message for one it
    /// denies, and 403 `unknown_resource` otherwise; a missing field is 400.
    package func programmerAuthorization(serverID: String, form: [String: String]) -> ProgrammerAnswer {
        if let fault = takeProgrammerFault(serverID) {
            switch fault {
            case .status(let status): return .http(status: status, contentType: "text/plain", body: Array("HTTP \(status)\n".utf8))
            case .garbage: return .http(status: 200, contentType: "text/html", body: Array("<html>maintenance</html>".utf8))
            case .notAnObject: return .http(status: 200, contentType: "application/json", body: Array(#"["not","an","object"]"#.utf8))
            case .noAnswer: return .noAnswer
            }
        }
        guard let server = world.chainProviders.first(where: { $0.id == serverID && $0.kind == .server }) else {
            return Self.json(404, ["error": "unknown_server"])
        }
        guard let device = form["device_id"], let session = form["session_id"], let resource = form["resource"] else {
            return Self.json(400, ["error": "missing_field", "message": "device_id, session_id and resource are required."])
        }
        programmerRequests.append((serverID, session, resource))
        if let message = server.denials[resource] { return Self.json(403, ["error": "not_entitled", "message": .string(message)]) }
        guard server.grants.contains(resource) else { return Self.json(403, ["error": "unknown_resource"]) }
        if server.pinProtected.contains(resource) {
            // A parental control: only a transaction the user approved (with the PIN), once.
            guard let id = form["_txId"] else {
                let id = Base64URL.encode(random.bytes(12))
                remember(id)
                transactions.append((id, serverID, device, resource, false, false))
                return Self.json(401, ["advices": ["TransactionConditionAdvice": [.string(id)]], "message": "A PIN is needed."])
            }
            guard let index = transactions.firstIndex(where: { $0.id == id && $0.server == serverID }),
                transactions[index].device == device, transactions[index].resource == resource
            else { return Self.json(403, ["error": "unknown_transaction", "message": "The transaction is not known."]) }
            guard !transactions[index].used else {
                return Self.json(403, ["error": "transaction_used", "message": "The transaction was already used."])
            }
            guard transactions[index].approved else {
                return Self.json(403, ["error": "transaction_not_approved", "message": "The transaction was not approved."])
            }
            transactions[index].used = true
        }
        let digest = SHA256.hash("\(serverID)|\(device)|\(session)|\(resource)|\(programmerRequests.count)")
        let auth = Base64URL.encode(Array(digest.prefix(24)))
        remember(auth)
        return Self.json(200, ["auth": .string(auth), "resource": .string(resource), "session_id": .string(session)])
    }

    /// The user enters `pin` for the step-up the app showed (`preferring` its transaction, while it is
    /// pending), else the one a programmer's server asked last: right, the transaction is approved;
    /// wrong, nothing is.
    package func confirmTransaction(pin: String, preferring shown: String? = nil) {
        guard let pending = pendingTransaction(preferring: shown) else { return }
        _ = confirmTransaction(serverID: pending.server, form: ["transaction": pending.id, "pin": pin])
    }

    /// The step-up a programmer's server asked for last that is neither approved nor used: its server and
    /// transaction id (what the app shows the user a PIN page for).
    package var pendingTransaction: (server: String, id: String)? { pendingTransaction(preferring: nil) }

    /// The pending step-up whose transaction is `shown` (the one an app showed), else the one asked last.
    package func pendingTransaction(preferring shown: String?) -> (server: String, id: String)? {
        let pending = transactions.filter { !$0.used && !$0.approved }
        return (pending.last { $0.id == shown } ?? pending.last).map { ($0.server, $0.id) }
    }

    /// The programmer's step-up page, as the user's PIN entry posts it: a form with `transaction` (the
    /// id the advice carried) and `pin`. The right PIN approves the transaction (200 `{"approved":true}`);
    /// a wrong one approves nothing (403 `wrong_pin`); an unknown, used or already approved transaction
    /// is 404 `unknown_transaction` or 403 `transaction_used`; a missing field is 400.
    package func confirmTransaction(serverID: String, form: [String: String]) -> ProgrammerAnswer {
        guard let server = world.chainProviders.first(where: { $0.id == serverID && $0.kind == .server }) else {
            return Self.json(404, ["error": "unknown_server"])
        }
        guard let id = form["transaction"], let pin = form["pin"] else {
            return Self.json(400, ["error": "missing_field", "message": "transaction and pin are required."])
        }
        guard let index = transactions.firstIndex(where: { $0.id == id && $0.server == serverID }) else {
            return Self.json(404, ["error": "unknown_transaction", "message": "The transaction is not known."])
        }
        guard !transactions[index].used, !transactions[index].approved else {
            return Self.json(403, ["error": "transaction_used", "message": "The transaction was already answered."])
        }
        guard server.pin == pin else { return Self.json(403, ["error": "wrong_pin", "message": "The PIN is not right."]) }
        transactions[index].approved = true
        return Self.json(200, ["approved": true])
    }

    /// The next answer of server `serverID` (or every one, until healed) misbehaves.
    package func failProgrammer(_ serverID: String, with fault: ProgrammerFault, untilHealed: Bool = false) {
        programmerFaults[serverID] = (fault, untilHealed)
    }

    /// Server `serverID` answers normally again.
    package func healProgrammer(_ serverID: String) { programmerFaults[serverID] = nil }

    /// Every request the programmer's servers received: server, session and resource, in order.
    package var programmerLog: [(server: String, session: String, resource: String)] { programmerRequests }

    private func takeProgrammerFault(_ serverID: String) -> ProgrammerFault? {
        guard let fault = programmerFaults[serverID] else { return nil }
        if !fault.untilHealed { programmerFaults[serverID] = nil }
        return fault.fault
    }

    private static func json(_ status: Int, _ members: [String: JSONValue]) -> ProgrammerAnswer {
        .http(status: status, contentType: "application/json", body: JSONValue.object(members).canonicalBytes)
    }
}
