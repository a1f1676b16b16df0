import EntitlementFuzzing

/// `entitle explore`: the random explorer's long mode.
enum ExploreCommand {
    static func run(seeds: Int, from: UInt64, length: Int) async -> Int32 {
        let explorer = RandomExplorer(length: length)
        let clock = ContinuousClock()
        let start = clock.now
        var seed = from
        for done in 1...seeds {
            if let failure = await explorer.explore(seed: seed) {
                print("seed \(seed) failed after \(done - 1) clean runs; shortening the script…")
                let shortened = await explorer.exploreAndShrink(seed: seed) ?? failure
                print(shortened.description)
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
