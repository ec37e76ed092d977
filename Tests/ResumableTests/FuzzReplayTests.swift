import Foundation
import HTTPCore
import Resumable
import Testing

/// The committed inputs of the FuzzTus target (its seeds and regressions), replayed with its
/// property; the directories must hold their committed inputs, so a moved or emptied one
/// fails here instead of replaying nothing.
@Suite struct FuzzReplayTests {
    static let fuzz = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz")

    /// FuzzTus's property (Fuzz/Sources/FuzzTus): ids are 32 hex digits, offsets and lengths in
    /// range, metadata and records survive their round trips.
    static func check(_ name: String, _ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        let methods = ["POST", "HEAD", "PATCH", "DELETE", "OPTIONS", "GET"]
        let rest = Array(bytes.dropFirst())
        let lines = rest.split(separator: 0x0A, omittingEmptySubsequences: false)
        var headers = HeaderFields()
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            headers.append(
                HeaderFields.Field(
                    name: Array(line[..<colon]), value: Array(line[(colon + 1)...].drop { $0 == 0x20 })))
        }
        let maxSize: Int64 = 1 << 30
        if let request = try? TusRequest.read(
            method: methods[Int(bytes[0]) % methods.count],
            path: String(decoding: lines.first ?? [], as: UTF8.self),
            headers: headers, prefix: "/files", maxSize: maxSize)
        {
            switch request {
            case .head(let id), .delete(let id):
                #expect(UploadID(id.hex) == id, "\(name)")
            case .patch(let patch):
                #expect(UploadID(patch.id.hex) == patch.id && patch.offset >= 0, "\(name)")
                #expect((0...maxSize).contains(patch.length ?? 0), "\(name)")
            case .create(let creation):
                #expect((0...maxSize).contains(creation.length ?? 0), "\(name)")
            case .options:
                break
            }
        }
        if let metadata = try? UploadMetadata.parse(rest) {
            #expect((try? UploadMetadata.parse(Array(metadata.serialized.utf8))) == metadata, "\(name)")
        }
        if let info = try? UploadInfo.decode(rest) {
            #expect((try? UploadInfo.decode(info.encoded)) == info, "\(name)")
        }
    }

    @Test(arguments: [("Seeds", 7), ("Regressions", 2)])
    func committedInputsKeepTheProperty(directory: String, atLeast: Int) throws {
        let folder = Self.fuzz.appendingPathComponent(directory).appendingPathComponent("FuzzTus")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(names.count >= atLeast, "\(folder.path) holds \(names.count) inputs")
        for name in names {
            Self.check(name, Array(try Data(contentsOf: folder.appendingPathComponent(name))))
        }
    }

    @Test func aRecordSurvivesTheProperty() {
        let info = UploadInfo(
            id: UploadID.random(), length: nil, offset: 7,
            metadata: UploadMetadata(pairs: [
                .init(key: "filename", value: Array("a b".utf8)), .init(key: "x", value: nil),
            ]),
            owner: "jwt:alice", createdAt: 1, expiresAt: 2, concatenation: .partial)
        Self.check("record", [0] + info.encoded)
        #expect((try? UploadInfo.decode(info.encoded)) == info)
    }
}
