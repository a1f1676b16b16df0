import EntitlementCommandLine
import EntitlementFuzzing
import EntitlementSupport
import Foundation

/// `entitle fuzz TARGET`: a fuzz target's long mode. The parent runs the cases in a child process
/// (`--child`) that prints each seed before its case, so when a case traps, the parent still knows
/// the seed and prints its input.
enum FuzzCommand {
    static func run(target name: String, count: Int, seed: UInt64, child: Bool) async -> Int32 {
        guard let target = FuzzTargets.named(name) else {
            StandardError.write("entitle fuzz: unknown target '\(name)' (\(FuzzTargets.all.map(\.name).joined(separator: ", ")))\n")
            return 2
        }
        return child ? await runHere(target, count: count, seed: seed) : await runInChild(target, count: count, seed: seed)
    }

    /// The child: `seed S` before each case, `fail S` and the failure, or `done`.
    private static func runHere(_ target: FuzzTarget, count: Int, seed: UInt64) async -> Int32 {
        var current = seed
        for _ in 0..<count {
            print("seed \(current)")
            fflush(nil)
            if let failure = await target.run(current) {
                print("fail \(current)\n\(failure.problem)\n\(failure.reproduction)")
                return 1
            }
            current &+= 1
        }
        print("done")
        return 0
    }

    private static func runInChild(_ target: FuzzTarget, count: Int, seed: UInt64) async -> Int32 {
        let started = ContinuousClock.now
        let program = FileManager.default.isExecutableFile(atPath: "/proc/self/exe") ? "/proc/self/exe" : CommandLine.arguments[0]
        // The child writes to a file, not a pipe: nothing can block, and a crash loses nothing written.
        let log = NSTemporaryDirectory() + "entitle-fuzz-\(getpid()).log"
        guard FileManager.default.createFile(atPath: log, contents: nil) else {
            StandardError.write("entitle fuzz: could not create \(log)\n")
            return 2
        }
        defer { try? FileManager.default.removeItem(atPath: log) }
        let termination: ChildProcess.Termination
        do {
            let child = try ChildProcess.spawn(
                program, ["fuzz", target.name, "--count", String(count), "--seed", String(seed), "--child"], output: .file(log))
            termination = await child.waitForExit()
        } catch {
            StandardError.write("entitle fuzz: could not start the child process: \(error)\n")
            return 2
        }
        let elapsed = ContinuousClock.now - started
        var lastSeed: UInt64?
        var report: [String] = []
        var failing = false
        let lines = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n", omittingEmptySubsequences: false)
        for line in lines {
            if failing {
                report.append(String(line))
            } else if line.hasPrefix("seed "), let value = UInt64(line.dropFirst(5)) {
                lastSeed = value
            } else if line.hasPrefix("fail ") {
                failing = true
            }
        }
        if failing, let lastSeed {
            print("\(target.name): seed \(lastSeed) failed: " + report.joined(separator: "\n"))
            print("reproduce with: entitle fuzz \(target.name) --seed \(lastSeed) --count 1")
            return 1
        }
        if termination != .exited(0) {
            let seed = lastSeed.map(String.init) ?? "before the first case"
            print("\(target.name): the case for seed \(seed) crashed (\(termination)); its input:")
            if let lastSeed { print(await target.input(lastSeed)) }
            print("reproduce with: entitle fuzz \(target.name) --seed \(seed) --count 1")
            return 1
        }
        print("\(count) cases of \(target.name) from seed \(seed), no failure (\(elapsed))")
        return 0
    }
}
