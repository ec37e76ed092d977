import ProxyCore
import Testing

@testable import Proxy

/// A live board record survives its trip through the fixed-size words: numbers, `nil`s,
/// strings cut to their field at a character boundary (never half a UTF-8 sequence).
@Suite struct LiveRecordTests {
    @Test func aRecordRoundTrips() {
        var status = LiveStatus(
            requestID: "9658cae5ec2914cdcdf32ac62e4d1642", route: "photos", http2: true, startedAt: 0,
            stage: .heldScan, bytesIn: 123_456_789)
        status.bytesExpected = 987_654_321
        status.partName = "file"
        status.partFilename = "été.jpg"
        status.identity = "alice"
        status.tusOffset = 0
        status.tusLength = nil
        let record = LiveRecord(
            serial: 42, status: status, client: "2001:db8::1", startedUnixMilliseconds: 1_764_000_000_000)
        var words = [UInt64](repeating: 0, count: LiveRecord.words)
        record.encode(into: &words)
        #expect(LiveRecord(decoding: words) == record)
    }

    @Test func aFreeSlotDecodesToNothing() {
        #expect(LiveRecord(decoding: [UInt64](repeating: 0, count: LiveRecord.words)) == nil)
    }

    @Test(arguments: [1, 2, 3, 4])
    func longStringsAreCutAtACharacterBoundary(_ width: Int) {
        // 200 characters of `width` UTF-8 bytes each: far over the 127-byte filename field.
        let scalar = ["a", "é", "€", "😀"][width - 1]
        let name = String(repeating: scalar, count: 200)
        var status = LiveStatus(
            requestID: "r", route: nil, http2: false, startedAt: 0, stage: .receiving, bytesIn: 0)
        status.partName = "f"
        status.partFilename = name
        let record = LiveRecord(serial: 1, status: status, client: "", startedUnixMilliseconds: 0)
        var words = [UInt64](repeating: 0, count: LiveRecord.words)
        record.encode(into: &words)
        let decoded = LiveRecord(decoding: words)?.status.partFilename ?? ""
        #expect(decoded.utf8.count <= 127 && decoded.utf8.count > 120)
        #expect(decoded == String(repeating: scalar, count: decoded.unicodeScalars.count))
        #expect(LiveRecord(decoding: words)?.status.route == nil)
    }

    @Test func aFinishedRecordRoundTrips() {
        var access = AccessRecord(
            requestID: "id-1", method: "POST", path: "/upload", route: "photos", startedAt: 10)
        access.finishedAt = 1510
        access.status = 413
        access.bytesIn = 77
        access.error = "multipart limit exceeded: file_bytes"
        let record = LiveFinishedRecord(serial: 3, record: access, finishedUnixMilliseconds: 99)
        var words = [UInt64](repeating: 0, count: LiveFinishedRecord.words)
        record.encode(into: &words)
        let decoded = LiveFinishedRecord(decoding: words)
        #expect(decoded == record)
        #expect(decoded.durationMilliseconds == 1500)
    }
}
