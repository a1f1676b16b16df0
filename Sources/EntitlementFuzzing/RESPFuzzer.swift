import EntitlementRedis

/// Fuzzes the RESP parser with mutated server answers fed in random pieces. The oracle: it never
/// traps; it reads the same values (or the same error at the same byte) however the bytes are
/// split; and every value it reads writes back to bytes it reads as the same value.
package enum RESPFuzzer {
    /// The `resp` target.
    package static let target = FuzzTarget(
        name: "resp", summary: "mutated Redis answers in random pieces: the same reading however split, values that round-trip",
        input: { String(decoding: bytes(seed: $0), as: UTF8.self) }, run: { check(seed: $0) })

    static let corpus: [String] = [
        "+OK\r\n", "-ERR unknown command 'FOO'\r\n", ":1000\r\n", ":-1\r\n", "$5\r\nhello\r\n", "$0\r\n\r\n", "$-1\r\n",
        "*-1\r\n", "*0\r\n", "*3\r\n+OK\r\n+QUEUED\r\n*2\r\n:1\r\n$-1\r\n",
        "*2\r\n$18\r\n{\"v\":3,\"tokens\":{}}\r\n:1700000000000\r\n",
        "+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n:1\r\n+OK\r\n",
    ]

    static func bytes(seed: UInt64) -> [UInt8] {
        var random = FuzzRandom(seed: seed)
        let base = random.pick(corpus).replacingOccurrences(of: "\r\n", with: "\r\u{1}\n")
        let mutated = TextMutator.mutate(base, &random).replacingOccurrences(of: "\r\u{1}\n", with: "\r\n")
            .replacingOccurrences(of: "\u{1}", with: "")
        return Array(mutated.utf8)
    }

    /// What a parser read from some bytes: values, then an error or the wait for more.
    struct Reading: Equatable {
        var values: [RESPValue] = []
        var error: RESPParseError?
    }

    static func read(_ pieces: [ArraySlice<UInt8>]) -> Reading {
        var parser = RESPParser(limits: .init(bulkLength: 1 << 16, arrayCount: 1 << 12, depth: 8, lineLength: 1 << 12))
        var reading = Reading()
        for piece in pieces {
            parser.append(piece)
            do throws(RESPParseError) {
                while let value = try parser.next() { reading.values.append(value) }
            } catch {
                reading.error = error
                return reading
            }
        }
        return reading
    }

    static func check(seed: UInt64) -> FuzzFailure? {
        let input = bytes(seed: seed)
        let whole = read([input[...]])
        var random = FuzzRandom(seed: seed ^ 0x5EED)
        var pieces: [ArraySlice<UInt8>] = []
        var start = 0
        while start < input.count {
            let length = 1 + Int(random.next() % 7)
            pieces.append(input[start..<min(input.count, start + length)])
            start += length
        }
        let split = read(pieces)
        let shown = String(decoding: input, as: UTF8.self)
        guard split == whole else {
            return FuzzFailure(seed: seed, problem: "whole: \(whole), in pieces: \(split)", reproduction: shown)
        }
        for value in whole.values {
            let again = read([value.encoded[...]])
            guard again.values == [value], again.error == nil else {
                return FuzzFailure(seed: seed, problem: "\(value) does not round-trip: \(again)", reproduction: shown)
            }
        }
        return nil
    }
}
