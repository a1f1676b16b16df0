import EntitlementCommandLine
import EntitlementFuzzing

/// `entitle explore`: the random explorer's long mode.
enum ExploreCommand {
    static func run(seeds: Int, from: UInt64, length: Int, trace: String?) async -> Int32 {
        let explorer = RandomExplorer(length: length)
        let clock = ContinuousClock()
        let start = clock.now
        var seed = from
        for done in 1...seeds {
            if let failure = await explorer.explore(seed: seed) {
                print("seed \(seed) failed after \(done - 1) clean runs; shortening the script…")
                let shortened = await explorer.exploreAndShrink(seed: seed) ?? failure
                print(shortened.description)
                if let trace {
                    do throws(CommandFile.Problem) {
                        try CommandFile.write(await explorer.trace(of: shortened.steps, seed: seed).text, to: trace)
                        print("the shortened script's trace: \(trace) (read it with: entitle trace show \(trace))")
                    } catch {
                        StandardError.write("entitle explore: \(error)\n")
                    }
                }
                print("reproduce with: entitle explore --from \(seed) --seeds 1 --length \(length)")
                return 1
            }
            if done % 1000 == 0 { print("\(done) runs, no failure (\(clock.now - start))") }
            seed &+= 1
        }
        print("\(seeds) runs of \(length) steps from seed \(from), no failure (\(clock.now - start))")
        return 0
    }
}
