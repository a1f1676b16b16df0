/// Seeded mutations of text inputs (traces, scenarios, token files): byte and line edits, and
/// numbers, durations and strings replaced by extremes.
enum TextMutator {
    static let extremeNumbers = [
        "-1", "0", "9223372036854775807", "-9223372036854775808", "9223372036854775808", "18446744073709551616",
        "1e30", "1.5", "-0", "00", "999999999999999999999999",
    ]
    static let extremeWords = [
        "9999999999999d", "106751991000d", "-1s", "0s", "1ms", "\"", "\"\\q\"", "~\"([\"", "$", "$x=*", "...", "nil",
        "[", "]", "{", "}", "[[[[[[[[", "\u{0}", "\u{2028}", "é", "😀", "null", "true", "\"\"", String(repeating: "x", count: 5000),
    ]

    /// `text` with 1 to 4 random edits.
    static func mutate(_ text: String, _ random: inout FuzzRandom) -> String {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            guard !lines.isEmpty else { lines = [""] ; continue }
            let index = Int.random(in: 0..<lines.count, using: &random)
            switch Int.random(in: 0..<9, using: &random) {
            case 0: lines.remove(at: index)
            case 1: lines.insert(lines[index], at: index)
            case 2: lines.swapAt(index, Int.random(in: 0..<lines.count, using: &random))
            case 3: lines[index] = replacingNumber(lines[index], with: random.pick(extremeNumbers), &random)
            case 4: lines[index] = replacingWord(lines[index], with: random.pick(extremeWords), &random)
            case 5: lines[index] = flippingByte(lines[index], &random)
            case 6: lines[index] = String(lines[index].prefix(Int.random(in: 0...lines[index].count, using: &random)))
            case 7: lines.insert(random.pick(extremeWords), at: index)
            default: lines[index] = replacingWord(lines[index], with: random.pick(extremeNumbers), &random)
            }
        }
        return lines.joined(separator: "\n")
    }

    /// One run of digits (with a sign) replaced by `number`.
    static func replacingNumber(_ line: String, with number: String, _ random: inout FuzzRandom) -> String {
        let characters = Array(line)
        let starts = characters.indices.filter { characters[$0].isNumber && ($0 == 0 || !characters[$0 - 1].isNumber) }
        guard !starts.isEmpty else { return line }
        var start = random.pick(starts)
        var end = start
        while end < characters.count, characters[end].isNumber { end += 1 }
        if start > 0, characters[start - 1] == "-" { start -= 1 }
        return String(characters[..<start]) + number + String(characters[end...])
    }

    /// One space-separated word replaced by `word`.
    static func replacingWord(_ line: String, with word: String, _ random: inout FuzzRandom) -> String {
        var words = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        guard !words.isEmpty else { return word }
        words[Int.random(in: 0..<words.count, using: &random)] = word
        return words.joined(separator: " ")
    }

    /// One byte changed to another (the line stays valid UTF-8: broken bytes become U+FFFD).
    static func flippingByte(_ line: String, _ random: inout FuzzRandom) -> String {
        var bytes = Array(line.utf8)
        guard !bytes.isEmpty else { return line }
        bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
        return String(decoding: bytes, as: UTF8.self)
    }
}
