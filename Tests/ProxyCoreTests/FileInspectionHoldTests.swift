import ProxyCore
import Testing
import UploadRules

/// An inspection that judges every file part, answered by the test.
final class EveryFileInspection: FileInspection {
    let timeoutMilliseconds: Int64

    init(timeoutMilliseconds: Int64 = 5_000) {
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    func inspects(_ part: PartLogRecord) -> Bool { true }
}

extension Harness {
    /// The verdict on the inspected file held by `hold` arrives.
    func fileVerdict(_ hold: HoldID, _ decision: HoldDecision?) {
        machine.fileVerdict(hold, decision, sink: sink, levels: shell.levels, now: now, actions: &actions)
        execute()
    }
}

/// A rule step may hold a file's final byte and the rest of the body until an asynchronous
/// verdict on that file (`FileInspection`, the generalisation of the digest hold): the upstream
/// never has the whole file before the verdict; a release sends the rest, a refusal (422), a
/// timeout or an inspection that cannot be had (503) leave its copy incomplete.
@Suite struct FileInspectionHoldTests {
    static let boundary = "insp3ct"
    static let content = Array("the file's whole content, last byte: Z".utf8)

    static func harness(timeout: Int64 = 5_000) -> Harness {
        var route = Route(pathPrefix: "/i", rewritesMultipart: true)
        route.rules.inspection = EveryFileInspection(timeoutMilliseconds: timeout)
        return Harness(routes: RouteTable([route]), highWater: 1 << 20)
    }

    /// A file, then a field after it.
    static var upload: String {
        let body =
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\n"
            + String(decoding: content, as: UTF8.self)
            + "\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"after\"\r\n\r\nlater\r\n--\(boundary)--\r\n"
        return
            "POST /i HTTP/1.1\r\nHost: t\r\nContent-Type: multipart/form-data; boundary=\(boundary)\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
            + body
    }

    /// Sends the upload and lets the upstream take what it is given.
    static func sent(_ harness: Harness) -> String {
        harness.clientSends(upload)
        harness.upstreamConnects()
        harness.upstreamDrains()
        return String(decoding: harness.shell.upstreamReceived, as: UTF8.self)
    }

    @Test func theFilesLastByteAndWhatFollowsWaitForTheVerdict() throws {
        let harness = Self.harness()
        let before = Self.sent(harness)
        #expect(harness.shell.log.contains("consultFile"))
        #expect(before.contains("last byte: "), "the file streams")
        #expect(!before.contains("last byte: Z"), "its final byte is held")
        #expect(!before.contains("later"), "so is everything after it")
        #expect(harness.shell.records.isEmpty)
        harness.fileVerdict(HoldID(rawValue: 0), .release)
        harness.upstreamDrains()
        harness.upstreamSends(Wire.ok)
        let payload = try #require(dechunked(messageBody(harness.shell.upstreamReceived)))
        let body = String(decoding: payload, as: UTF8.self)
        #expect(body.contains("\r\n\r\nthe file's whole content, last byte: Z\r\n--"))
        #expect(body.contains("name=\"after\"\r\n\r\nlater\r\n--"))
        #expect(body.hasSuffix("--\r\n"))
        #expect(harness.statuses == [200])
        #expect(harness.shell.aborted == 0)
    }

    @Test func aRefusedFileIsAnswered422AndTheUpstreamCopyStaysIncomplete() {
        let harness = Self.harness()
        _ = Self.sent(harness)
        harness.fileVerdict(HoldID(rawValue: 0), .refuse(RuleRefusal(.fileRefused, description: "infected")))
        harness.upstreamDrains()
        let received = String(decoding: harness.shell.upstreamReceived, as: UTF8.self)
        #expect(!received.contains("last byte: Z"))
        #expect(!received.contains("later"))
        #expect(harness.shell.aborted == 1)
        #expect(harness.statuses == [422])
    }

    @Test func noVerdictInTimeOrNoInspectorAnswers503() {
        let late = Self.harness(timeout: 2_000)
        _ = Self.sent(late)
        late.advance(by: 2_000)
        #expect(late.statuses == [503])
        #expect(late.shell.aborted == 1)
        let unavailable = Self.harness()
        _ = Self.sent(unavailable)
        unavailable.fileVerdict(HoldID(rawValue: 0), nil)
        #expect(unavailable.statuses == [503])
        #expect(!String(decoding: unavailable.shell.upstreamReceived, as: UTF8.self).contains("last byte: Z"))
    }

    @Test func aVerdictForAHoldThatIsGoneIsIgnored() {
        let harness = Self.harness()
        _ = Self.sent(harness)
        harness.fileVerdict(HoldID(rawValue: 7), .release)
        #expect(harness.statuses.isEmpty)
        harness.fileVerdict(HoldID(rawValue: 0), .release)
        harness.upstreamDrains()
        harness.upstreamSends(Wire.ok)
        #expect(harness.statuses == [200])
    }
}
