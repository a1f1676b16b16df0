import EntitlementSimulator
import EntitlementSupport
import Foundation
import EntitlementTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The package's own child processes (Foundation's `Process` crashes on Linux in a process with many
/// descriptors open): output captured from both streams, exit status and signal, a working directory,
/// and no descriptor of the parent's reaching the child.
@Suite("Child processes")
struct ChildProcessTests {
    @Test func runCapturesBothStreamsAndTheExitStatus() throws {
        // More than a pipe holds on the error stream, written before the output: neither stalls the other.
        let child = try ChildProcess.run("/bin/sh", ["-c", "head -c 200000 /dev/zero | tr '\\0' e >&2; echo out; exit 3"])
        expectEqual(child.termination, .exited(3))
        expectEqual(child.termination.status, 3)
        expectEqual(String(decoding: child.output, as: UTF8.self), "out\n")
        #expect(child.errors.count == 200_000 && child.errors.allSatisfy { $0 == UInt8(ascii: "e") })
    }

    @Test func aSignalledChildSaysWhichSignal() throws {
        let child = try ChildProcess.spawn("sleep", ["30"])
        #expect(child.isRunning)
        child.send(SIGKILL)
        expectEqual(child.waitForExit(), .signalled(SIGKILL))
        expectEqual(child.waitForExit().status, 128 + SIGKILL)
        #expect(!child.isRunning)
        child.send(SIGKILL)  // reaped: nothing is sent to a pid that may be another process's now
    }

    @Test func aDirectoryIsEnteredAndArgumentsArriveVerbatim() throws {
        let folder = ScratchSpace.path("entitle-child-")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let child = try ChildProcess.run("/bin/sh", ["-c", #"pwd; printf '%s|' "$@""#, "sh", "a b", "$HOME", "*"], directory: folder)
        let lines = String(decoding: child.output, as: UTF8.self).split(separator: "\n")
        #expect(lines.first.map { URL(fileURLWithPath: String($0)).resolvingSymlinksInPath().path }
            == URL(fileURLWithPath: folder).resolvingSymlinksInPath().path)
        expectEqual(lines.last, "a b|$HOME|*|")
    }

    @Test func theChildInheritsNoDescriptorButItsStreams() throws {
        // A descriptor without close-on-exec, as a socket made by plain `socket(2)` is.
        let inherited = open("/dev/null", O_RDONLY)
        try #require(inherited > 2)
        defer { close(inherited) }
        let child = try ChildProcess.run("/bin/sh", ["-c", "test -e /proc/self/fd/\(inherited) && echo open || echo closed"])
        expectEqual(String(decoding: child.output, as: UTF8.self), "closed\n")
    }

    /// A child started leading its own group is signalled with everything it started: a shell's
    /// background grandchild holding the output pipe dies with it, so the pipe ends (with `send` alone
    /// the grandchild would keep it open for its 30 seconds).
    @Test func aGroupSignalReachesTheGrandchildren() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let child = try ChildProcess.spawn("/bin/sh", ["-c", "sleep 30 & echo started; wait"], output: .descriptor(ends[1]), ownGroup: true)
        close(ends[1])
        defer { close(ends[0]) }
        var buffer = [UInt8](repeating: 0, count: 64)
        expectEqual(read(ends[0], &buffer, buffer.count), 8, "the shell started its grandchild")
        let started = ContinuousClock.now
        child.sendToGroup(SIGKILL)
        expectEqual(child.waitForExit(), .signalled(SIGKILL))
        expectEqual(read(ends[0], &buffer, buffer.count), 0, "the pipe ended: no grandchild holds it")
        #expect(ContinuousClock.now - started < .seconds(25), "the end came from the signal, not the grandchild's own end")
    }

    @Test func aProgramThatDoesNotExistIsATypedError() {
        #expect(throws: ChildProcessError.self) { try ChildProcess.spawn("/nonexistent/program", []) }
    }

    @Test func aWaitWithALimitEnds() async throws {
        // An hour: the child is still running when the wait ends, however long a loaded machine takes to get there.
        let child = try ChildProcess.spawn("sleep", ["3600"])
        await expectEqual(child.waitForExit(upTo: .milliseconds(100)), false)
        await child.killAndReap()
        expectEqual(child.termination, .signalled(SIGKILL))
    }
}

/// The gist `entitle fleet` prints for a node that crashed, read from a Swift runtime crash report.
@Suite("Crash reports")
struct CrashReportTests {
    @Test func whatCrashedAndTheCrashedThreadsFirstFrame() {
        let report = """

            *** Signal 4: Backtracing from 0x7ff41bf56dbc... done ***

            *** Program crashed: Illegal instruction at 0x00007ff41bf56dbc ***

            Thread 0 "entitle":

              0      0x00007ff41a281301 sigsuspend + 65 in libc.so.6
            ...

            Thread 2 "-qos.overcommit" crashed:

              0      0x00007ff41bf56dbc _dispatch_source_refs_finalize_unregistration + 76 in libdispatch.so
              1 [ra] 0x00007ff41bf57efb _dispatch_source_merge_evt + 42 in libdispatch.so
            """
        expectEqual(
            CrashReport.summary(report),
            "*** Program crashed: Illegal instruction at 0x00007ff41bf56dbc *** — "
                + "0      0x00007ff41bf56dbc _dispatch_source_refs_finalize_unregistration + 76 in libdispatch.so")
    }

    @Test func aFatalErrorWithoutThreadsAnOtherTextAndNothing() {
        expectEqual(CrashReport.summary("x\nFatal error: Index out of range\n"), "Fatal error: Index out of range")
        expectEqual(CrashReport.summary("\n  something else  \n"), "something else")
        expectEqual(CrashReport.summary(""), "an empty report")
        expectEqual(CrashReport.summary(String(repeating: "crashed ", count: 100)).count, 200)
    }
}
