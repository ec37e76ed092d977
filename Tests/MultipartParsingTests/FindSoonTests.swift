import CByteSearch
import HTTPCore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `fg_find_soon`, the body search: memchr over the first `probe` candidate starts, memmem for
/// the rest. It finds what memmem finds (the first occurrence, or none) wherever the needle
/// lies: before, across and after the probe's end, cut short by the haystack's end, and in
/// seeded haystacks dense in the needle's bytes.
@Suite struct FindSoonTests {
    static let seed: UInt64 = 0x00F1_4D50
    static let needle = Array("\n--boundary-7MA4YWxkTrZu0gW".utf8)

    /// The offset `fg_find_soon` gives, or nil; and memmem's.
    static func both(_ haystack: [UInt8], probe: Int) -> (Int?, Int?) {
        haystack.withUnsafeBytes { hay in
            needle.withUnsafeBytes { pattern in
                let base = hay.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
                let soon = fg_find_soon(base, hay.count, pattern.baseAddress!, pattern.count, probe)
                let plain = fg_memmem(base, hay.count, pattern.baseAddress!, pattern.count)
                return (soon.map { $0 - base }, plain.map { $0 - base })
            }
        }
    }

    @Test func theNeedleAtEveryOffsetAroundTheProbe() {
        for probe in [0, 1, 16, 256] {
            for length in [0, 5, 26, 27, 28, 100, 300] {
                for offset in 0...max(0, length - 1) {
                    var haystack = [UInt8](repeating: 0x2D, count: length)
                    // The needle, possibly cut by the end, and a lone first byte before it.
                    for (index, byte) in Self.needle.enumerated() where offset + index < length {
                        haystack[offset + index] = byte
                    }
                    if offset > 1 { haystack[offset - 2] = 0x0A }
                    let (soon, plain) = Self.both(haystack, probe: probe)
                    #expect(soon == plain, "probe \(probe), length \(length), offset \(offset)")
                }
            }
        }
    }

    @Test func seededHaystacksDenseInTheNeedlesBytes() {
        var random = SplitMix64(seed: Self.seed)
        let alphabet = Array("\n\r-b".utf8)
        for round in 0..<4_000 {
            var haystack = (0..<Int(random.next() % 600)).map { _ in alphabet[Int(random.next() % 4)] }
            if random.next() % 2 == 0, !haystack.isEmpty {
                let at = Int(random.next() % UInt64(haystack.count))
                let prefix = Int(random.next() % UInt64(Self.needle.count + 1))
                haystack.replaceSubrange(at..<at, with: Self.needle[..<prefix])
            }
            let probe = Int(random.next() % 300)
            let (soon, plain) = Self.both(haystack, probe: probe)
            #expect(soon == plain, "seed \(Self.seed), round \(round)")
        }
    }
}
