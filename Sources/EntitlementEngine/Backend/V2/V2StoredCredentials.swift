import EntitlementSupport

/// How the package's credential stores write client credentials, and read them back: V2's own
/// registration answer inside a versioned envelope, `{"credentials":{…},"format":1}`. A bare
/// registration answer (what stores wrote before the envelope) reads as format 1.
///
/// What a store holds that this version cannot read — another format, damaged bytes — is refused
/// with a clear error (``BackendError/Code/clientCredentials``), never taken for "no credentials": registering again would make a new client
/// and lose the users' profiles (Adobe's *REST API V2 Checklist*).
package enum V2StoredCredentials {
    /// The format this version writes and reads.
    package static let format = 1

    /// `credentials` in their envelope, as canonical JSON — sealed with `sealing` when given.
    package static func encode(_ credentials: V2ClientCredentials, sealing: (any TokenSealing)?) throws(BackendError) -> [UInt8] {
        let plain = JSONValue.object(["format": .int(Int64(format)), "credentials": credentials.json]).canonicalBytes
        do throws(TokenStorageError) {
            return try SealedValue.stored(plain, sealing: sealing)
        } catch {
            throw .clientCredentials("the client credentials could not be sealed: \(error)")
        }
    }

    /// The credentials `bytes` hold (opened with `sealing` when sealed), from `place` (a file's path, a
    /// Redis key: for the error).
    package static func decode(_ stored: [UInt8], from place: String, sealing: (any TokenSealing)?) throws(BackendError) -> V2ClientCredentials {
        let bytes: [UInt8]
        do throws(TokenStorageError) {
            bytes = try SealedValue.plain(stored, sealing: sealing)
        } catch {
            throw .clientCredentials("\(place) holds sealed client credentials this store cannot open (\(error)); give it the fleet's sealing")
        }
        guard let json = try? JSONReader.read(bytes) else {
            throw .clientCredentials("\(place) holds no client credentials this version reads (not JSON); repair or remove it to register again")
        }
        let body: JSONValue
        if let written = json["format"] {
            guard let number = written.int, number >= 1 else {
                throw .clientCredentials("\(place) names no format this version knows")
            }
            guard number <= Int64(format) else {
                throw .clientCredentials(
                    "\(place) holds client credentials in format \(number), written by a newer version; this one reads format \(format)")
            }
            body = json["credentials"] ?? .null
        } else {
            body = json  // V2's bare registration answer
        }
        do throws(V2DecodingError) {
            return try V2ClientCredentials(json: body)
        } catch {
            throw .clientCredentials("\(place) holds no client credentials this version reads (\(error)); repair or remove it to register again")
        }
    }
}
