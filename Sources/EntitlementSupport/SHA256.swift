/// SHA-256 (FIPS 180-4), written here because the package has no dependencies.
///
/// Used for hashing user ids in tracking data and key names and, through HMAC, for signing media
/// tokens. Tested against the NIST example vectors. Contiguous input (arrays, slices, a string's UTF-8)
/// is compressed 64 bytes at a time straight from its storage; the state is eight words and the
/// message schedule lives on the stack, so hashing allocates nothing but the digest.
package struct SHA256: Sendable {
    // MARK: - Constants (FIPS 180-4 §4.2.2, §5.3.3)

    private static let roundConstants: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    // MARK: - State

    private var h0: UInt32 = 0x6a09_e667, h1: UInt32 = 0xbb67_ae85, h2: UInt32 = 0x3c6e_f372, h3: UInt32 = 0xa54f_f53a
    private var h4: UInt32 = 0x510e_527f, h5: UInt32 = 0x9b05_688c, h6: UInt32 = 0x1f83_d9ab, h7: UInt32 = 0x5be0_cd19
    /// Bytes of an unfinished block: the first ``pendingCount`` of these 64, held in the value itself
    /// so that copying a prepared state (as HMAC does per message) allocates nothing.
    /// (A SIMD value rather than a tuple: a tuple's type is looked up at run time in unoptimized builds.)
    private var pending = SIMD8<UInt64>()
    private var pendingCount = 0
    private var byteCount: UInt64 = 0

    /// Creates an empty hash computation.
    package init() {}

    // MARK: - Hashing

    /// Feeds more bytes into the hash.
    package mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        let contiguous: Void? = bytes.withContiguousStorageIfAvailable { buffer in update(UnsafeRawBufferPointer(buffer)) }
        guard contiguous == nil else { return }
        // Not contiguous (a lazy sequence, say): gather into blocks of 64.
        var chunk: [UInt8] = []
        chunk.reserveCapacity(64)
        for byte in bytes {
            chunk.append(byte)
            if chunk.count == 64 {
                chunk.withUnsafeBytes { update($0) }
                chunk.removeAll(keepingCapacity: true)
            }
        }
        chunk.withUnsafeBytes { update($0) }
    }

    /// Feeds the bytes of `buffer`: the unfinished block is completed first, then whole blocks are
    /// compressed where they lie, and the rest waits for more.
    mutating func update(_ buffer: UnsafeRawBufferPointer) {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return }
        byteCount &+= UInt64(buffer.count)
        var offset = 0
        if pendingCount > 0 {
            let held = pendingCount, taken = min(64 - held, buffer.count)
            var block = pending
            withUnsafeMutableBytes(of: &block) { $0.baseAddress!.advanced(by: held).copyMemory(from: base, byteCount: taken) }
            offset = taken
            guard held + taken == 64 else {
                pending = block
                pendingCount = held + taken
                return
            }
            withUnsafeBytes(of: &block) { compress($0.baseAddress!) }
            pendingCount = 0
        }
        while buffer.count - offset >= 64 {
            compress(base + offset)
            offset += 64
        }
        if offset < buffer.count {
            let rest = buffer.count - offset
            let start = base + offset
            withUnsafeMutableBytes(of: &pending) { $0.baseAddress!.copyMemory(from: start, byteCount: rest) }
            pendingCount = rest
        }
    }

    /// Pads the message and lends its 32-byte digest to `body` (on the stack: nothing allocated).
    /// The hash is spent: feed it no more.
    package mutating func finalize<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        let bitLength = byteCount &* 8
        // The padded tail is one or two blocks, built on the stack.
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 16) { words in
            words.initialize(repeating: 0)
            let tail = UnsafeMutableRawPointer(words.baseAddress!)
            let held = pendingCount
            withUnsafeBytes(of: &pending) { tail.copyMemory(from: $0.baseAddress!, byteCount: held) }
            tail.storeBytes(of: 0x80, toByteOffset: held, as: UInt8.self)
            let length = held < 56 ? 64 : 128
            tail.storeBytes(of: bitLength.bigEndian, toByteOffset: length - 8, as: UInt64.self)
            compress(UnsafeRawPointer(tail))
            if length == 128 { compress(UnsafeRawPointer(tail) + 64) }
        }
        pendingCount = 0
        var digest = SIMD8<UInt32>(
            h0.bigEndian, h1.bigEndian, h2.bigEndian, h3.bigEndian, h4.bigEndian, h5.bigEndian, h6.bigEndian, h7.bigEndian
        )
        return withUnsafeBytes(of: &digest) { body($0) }
    }

    /// Pads the message and returns the 32-byte digest.
    package mutating func finalize() -> [UInt8] {
        finalize { Array($0) }
    }

    /// The SHA-256 digest of `bytes`.
    package static func hash<Bytes: Sequence>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// The SHA-256 digest of the UTF-8 bytes of `text`.
    package static func hash(_ text: String) -> [UInt8] {
        var text = text
        return text.withUTF8 { hash($0) }
    }

    // MARK: - Compression function (FIPS 180-4 §6.2.2)

    /// Compresses the 64 bytes at `block` into the state.
    private mutating func compress(_ block: UnsafeRawPointer) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { schedule in
            for t in 0..<16 {
                let base = t * 4
                schedule[t] = UInt32(block.load(fromByteOffset: base, as: UInt8.self)) << 24
                    | UInt32(block.load(fromByteOffset: base + 1, as: UInt8.self)) << 16
                    | UInt32(block.load(fromByteOffset: base + 2, as: UInt8.self)) << 8
                    | UInt32(block.load(fromByteOffset: base + 3, as: UInt8.self))
            }
            for t in 16..<64 {
                let w15 = schedule[t - 15], w2 = schedule[t - 2]
                let s0 = w15.rotatedRight(7) ^ w15.rotatedRight(18) ^ (w15 >> 3)
                let s1 = w2.rotatedRight(17) ^ w2.rotatedRight(19) ^ (w2 >> 10)
                schedule[t] = schedule[t - 16] &+ s0 &+ schedule[t - 7] &+ s1
            }
            var (a, b, c, d, e, f, g, h) = (h0, h1, h2, h3, h4, h5, h6, h7)
            Self.roundConstants.withUnsafeBufferPointer { constants in
                // Eight rounds per pass with the working variables' roles rotated in the calls,
                // instead of shifting eight values after every round.
                var t = 0
                while t < 64 {
                    Self.round(a, b, c, &d, e, f, g, &h, constants[t] &+ schedule[t])
                    Self.round(h, a, b, &c, d, e, f, &g, constants[t + 1] &+ schedule[t + 1])
                    Self.round(g, h, a, &b, c, d, e, &f, constants[t + 2] &+ schedule[t + 2])
                    Self.round(f, g, h, &a, b, c, d, &e, constants[t + 3] &+ schedule[t + 3])
                    Self.round(e, f, g, &h, a, b, c, &d, constants[t + 4] &+ schedule[t + 4])
                    Self.round(d, e, f, &g, h, a, b, &c, constants[t + 5] &+ schedule[t + 5])
                    Self.round(c, d, e, &f, g, h, a, &b, constants[t + 6] &+ schedule[t + 6])
                    Self.round(b, c, d, &e, f, g, h, &a, constants[t + 7] &+ schedule[t + 7])
                    t += 8
                }
            }
            h0 &+= a; h1 &+= b; h2 &+= c; h3 &+= d
            h4 &+= e; h5 &+= f; h6 &+= g; h7 &+= h
        }
    }

    /// One round (FIPS 180-4 §6.2.2 step 3) on working variables a…h, with `kw` = K_t + W_t: `d`
    /// becomes the new `e` and `h` the new `a`; the caller renames the rest.
    @inline(__always)
    private static func round(
        _ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: inout UInt32, _ e: UInt32, _ f: UInt32, _ g: UInt32, _ h: inout UInt32,
        _ kw: UInt32
    ) {
        let sum1 = e.rotatedRight(6) ^ e.rotatedRight(11) ^ e.rotatedRight(25)
        let choice = (e & f) ^ (~e & g)
        let temp1 = h &+ sum1 &+ choice &+ kw
        let sum0 = a.rotatedRight(2) ^ a.rotatedRight(13) ^ a.rotatedRight(22)
        let majority = (a & b) ^ (a & c) ^ (b & c)
        d &+= temp1
        h = temp1 &+ sum0 &+ majority
    }
}

extension UInt32 {
    /// The bits rotated right by `count` (0 < count < 32).
    @inline(__always)
    fileprivate func rotatedRight(_ count: UInt32) -> UInt32 { (self >> count) | (self << (32 &- count)) }
}
