/// One fuzz target: a seeded case generator and the oracle that judges each case.
///
/// A case is a pure function of its seed, so `entitle fuzz TARGET --seed S` reproduces it. A case
/// that traps takes the process down, which `swift test` reports loudly and `entitle fuzz` (which
/// runs the cases in a child process) turns into the failing seed and its input; a case the
/// oracle rejects returns a ``FuzzFailure``.
package struct FuzzTarget: Sendable {
    /// The name `entitle fuzz` takes (`url`, `trace`, `scenario`, `token-file`, `http-request`, `resp`).
    package let name: String
    /// One line saying what is fuzzed and what the oracle checks.
    package let summary: String
    /// The input the case for a seed feeds in, printable (to reproduce a crash by hand).
    package let input: @Sendable (_ seed: UInt64) async -> String
    /// Runs the case for `seed`: nil when the oracle accepts it.
    package let run: @Sendable (_ seed: UInt64) async -> FuzzFailure?

    /// Creates a target.
    package init(
        name: String, summary: String, input: @escaping @Sendable (_ seed: UInt64) async -> String,
        run: @escaping @Sendable (_ seed: UInt64) async -> FuzzFailure?
    ) {
        self.name = name
        self.summary = summary
        self.input = input
        self.run = run
    }
}

/// A case the oracle rejected: the seed that makes it and a readable reproduction.
package struct FuzzFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The case's seed.
    package var seed: UInt64
    /// What went wrong.
    package var problem: String
    /// The input, printable (secrets in it are the fuzzer's own).
    package var reproduction: String

    /// Creates a failure.
    package init(seed: UInt64, problem: String, reproduction: String) {
        self.seed = seed
        self.problem = problem
        self.reproduction = reproduction
    }

    /// `seed S: problem` and the reproduction.
    package var description: String { "seed \(seed): \(problem)\n\(reproduction)" }
}

/// Every fuzz target, by name.
package enum FuzzTargets {
    /// The targets `entitle fuzz` and the test suite run.
    package static let all: [FuzzTarget] = [
        URLFuzzer.target, TraceFuzzer.target, ScenarioFuzzer.target, TokenFileFuzzer.target, HTTPRequestFuzzer.target,
        RESPFuzzer.target, SecurityXMLFuzzer.target, JSONFuzzer.target,
    ]

    /// The target called `name`, if any.
    package static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }

    /// Runs `count` cases of `target` from `firstSeed` on; the first rejected case, or nil.
    package static func run(_ target: FuzzTarget, count: Int, firstSeed: UInt64 = 1) async -> FuzzFailure? {
        var seed = firstSeed
        for _ in 0..<max(0, count) {
            if let failure = await target.run(seed) { return failure }
            seed &+= 1
        }
        return nil
    }
}
