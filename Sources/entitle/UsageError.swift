/// A command line that could not be understood: what was wrong, naming the argument, and the
/// command whose help explains it.
struct UsageError: Error, Equatable {
    /// The problem, starting with `entitle COMMAND:`.
    let message: String
    /// The command whose help to point at (`nil`: the general usage).
    let command: String?

    init(_ message: String, command: String?) {
        self.message = message
        self.command = command
    }

    /// What `entitle` prints on standard error: the problem and where to read more, never the whole usage.
    var report: String {
        message + "\nRun 'entitle help" + (command.map { " " + $0 } ?? "") + "' for usage.\n"
    }

    /// `'word' (did you mean 'close'?)`, or `'word'` when nothing known is close.
    static func named(_ word: String, among known: [String]) -> String {
        Suggestion.closest(to: word, in: known).map { "'\(word)' (did you mean '\($0)'?)" } ?? "'\(word)'"
    }
}

/// The known word closest to a mistyped one.
enum Suggestion {
    /// The word of `known` nearest to `word` by edit distance, if it is near enough to be a typo
    /// (at most a third of the word's length, and at least one edit allowed).
    static func closest(to word: String, in known: [String]) -> String? {
        let limit = max(1, word.count / 3)
        let scored = known.map { ($0, distance(word.lowercased(), $0.lowercased())) }.filter { $0.1 <= limit }
        return scored.min { $0.1 < $1.1 }?.0
    }

    /// The edit distance between `a` and `b`: insertions, deletions, substitutions and swaps of
    /// two neighbours (`rnu` is one edit from `run`), each counting one.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
