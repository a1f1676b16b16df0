/// Whether `condition` becomes true within ten minutes, asked every 10 ms: a test waits for what it
/// needs to have happened rather than pausing for it. It returns as soon as the condition holds; only
/// one that never holds waits the whole bound, which a loaded machine's stall (a minute and more at the
/// suite's start on two cores) cannot outlast.
public func eventually(_ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(600)
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return await condition()
}
