import HTTPCore
import Testing

@testable import Resumable

@Suite struct TusAnswersTests {
    let id = UploadID("0123456789abcdef0123456789abcdef")!

    func value(_ answer: TusAnswers.Answer, _ name: String) -> String? {
        answer.headers.first(name).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func optionsAdvertiseTheExtensions() {
        let answer = TusAnswers.options(maxSize: 1 << 32)
        #expect(answer.status == 204)
        #expect(value(answer, "Tus-Resumable") == "1.0.0")
        #expect(value(answer, "Tus-Version") == "1.0.0")
        #expect(value(answer, "Tus-Max-Size") == "4294967296")
        #expect(value(answer, "Tus-Checksum-Algorithm") == "sha1,sha256,md5")
        #expect(
            value(answer, "Tus-Extension")
                == "creation,creation-with-upload,creation-defer-length,expiration,checksum,termination,concatenation"
        )
        #expect(value(TusAnswers.refusal(TusRequest.Refusal(412, "x")), "Tus-Version") == "1.0.0")
    }

    @Test func headReportsTheRecord() throws {
        let metadata = try UploadMetadata.parse(Array("filename YS5qcGc=".utf8))
        let info = UploadInfo(
            id: id, length: nil, offset: 7, metadata: metadata, createdAt: 0, expiresAt: 784_111_777)
        let answer = TusAnswers.head(info, locationBase: "https://up.example.com/files")
        #expect(answer.status == 200)
        #expect(value(answer, "Upload-Offset") == "7")
        #expect(value(answer, "Upload-Defer-Length") == "1")
        #expect(value(answer, "Upload-Length") == nil)
        #expect(value(answer, "Upload-Metadata") == "filename YS5qcGc=")
        #expect(value(answer, "Upload-Expires") == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(value(answer, "Cache-Control") == "no-store")
        var final = info
        final.concatenation = .final([id])
        #expect(
            value(TusAnswers.head(final, locationBase: "/files"), "Upload-Concat") == "final;/files/\(id)")
    }

    @Test func visibility() {
        let info = UploadInfo(id: id, length: 1, owner: "alice", createdAt: 0, expiresAt: 100)
        #expect(TusAnswers.visible(info, to: "alice", now: 99) == info)
        #expect(TusAnswers.visible(info, to: "bob", now: 99) == nil)
        #expect(TusAnswers.visible(info, to: nil, now: 99) == nil)
        #expect(TusAnswers.visible(info, to: "alice", now: 100) == nil)
        #expect(TusAnswers.visible(nil, to: "alice", now: 0) == nil)
    }

    func patch(_ offset: Int64, length: Int64? = nil) -> TusRequest.Patch {
        TusRequest.Patch(id: id, offset: offset, length: length, checksum: nil)
    }

    func status(_ body: () throws(TusRequest.Refusal) -> TusAnswers.PatchPlan) -> Int? {
        do {
            _ = try body()
            return nil
        } catch {
            return error.status
        }
    }

    @Test func patchPlans() throws {
        let info = UploadInfo(id: id, length: 10, offset: 4, createdAt: 0, expiresAt: 1)
        #expect(try TusAnswers.checkPatch(patch(4), info, declaredBytes: 6) == .write(info))
        #expect(
            status { () throws(TusRequest.Refusal) in
                try TusAnswers.checkPatch(patch(3), info, declaredBytes: 1)
            } == 409)
        #expect(
            status { () throws(TusRequest.Refusal) in
                try TusAnswers.checkPatch(patch(4), info, declaredBytes: 7)
            } == 413)
        #expect(
            status { () throws(TusRequest.Refusal) in
                try TusAnswers.checkPatch(patch(4, length: 10), info, declaredBytes: 1)
            } == 400)
        var deferred = info
        deferred.length = nil
        var set = deferred
        set.length = 8
        #expect(try TusAnswers.checkPatch(patch(4, length: 8), deferred, declaredBytes: 4) == .write(set))
        #expect(
            status { () throws(TusRequest.Refusal) in
                try TusAnswers.checkPatch(patch(4, length: 3), deferred, declaredBytes: 0)
            } == 400)
        var final = info
        final.concatenation = .final([id])
        #expect(
            status { () throws(TusRequest.Refusal) in
                try TusAnswers.checkPatch(patch(4), final, declaredBytes: 0)
            } == 403)
        // A complete final upload takes an empty PATCH at its length: the delivery's answer.
        final.offset = 10
        #expect(
            status { () throws(TusRequest.Refusal) in
                try TusAnswers.checkPatch(patch(10), final, declaredBytes: 1)
            } == 403)
        #expect(try TusAnswers.checkPatch(patch(10), final, declaredBytes: 0) == .complete)
        // Complete: the retried last PATCH (from its own offset, or from the end) replays.
        var done = info
        done.offset = 10
        #expect(try TusAnswers.checkPatch(patch(4), done, declaredBytes: 6) == .complete)
        #expect(try TusAnswers.checkPatch(patch(10), done, declaredBytes: 0) == .complete)
        #expect(
            status { () throws(TusRequest.Refusal) in
                try TusAnswers.checkPatch(patch(4), done, declaredBytes: 7)
            } == 409)
    }

    @Test func createdAndPatched() {
        let info = UploadInfo(id: id, length: 10, offset: 3, createdAt: 0, expiresAt: 0)
        let created = TusAnswers.created(info, locationBase: "https://h/files", withBody: true)
        #expect(created.status == 201)
        #expect(value(created, "Location") == "https://h/files/\(id)")
        #expect(value(created, "Upload-Offset") == "3")
        #expect(value(TusAnswers.created(info, locationBase: "/f", withBody: false), "Upload-Offset") == nil)
        let patched = TusAnswers.patched(info)
        #expect(patched.status == 204)
        #expect(value(patched, "Upload-Offset") == "3")
        #expect(value(patched, "Upload-Expires") == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(TusAnswers.terminated().status == 204)
    }
}
