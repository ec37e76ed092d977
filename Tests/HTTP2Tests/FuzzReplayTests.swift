import Foundation
import HTTP2
import HTTPCore
import Testing

/// The committed inputs of the FuzzH2 target (a first byte that sets the read size, then the
/// frames after the client preface), replayed into a server session with the harness's
/// settings and a caller that reads and consumes every DATA byte and answers each request once
/// its body ended: the session never traps, settles after every read, and no stream ever holds
/// more than its window (ours once the client acknowledged our SETTINGS, 65,535 bytes before).
/// The harness's `Exchange` behind each stream is `scripts/fuzz.sh`'s to replay. Each
/// directory must hold at least its committed inputs: a moved or emptied directory fails here
/// instead of replaying nothing.
@Suite struct FuzzReplayTests {
    static let settings: HTTP2Settings = {
        var settings = HTTP2Settings()
        settings.initialStreamWindow = 4096
        settings.connectionWindow = 16384
        settings.maxConcurrentStreams = 8
        settings.maxHeaderListSize = 2048
        settings.unansweredResetBudget = 16
        return settings
    }()

    /// Feeds `input` in reads of `size` bytes, answering as the caller described above.
    static func replay(_ name: String, _ input: [UInt8], size: Int) throws {
        let session = try HTTP2ServerSession(settings: settings)
        let window = max(Int(settings.initialStreamWindow), 65_535)
        var start = 0
        while start < input.count {
            let end = min(input.count, start + size)
            do {
                try input[start..<end].withUnsafeBytes { try session.receive($0) }
                try settle(session, window: window, name)
            } catch {
                return  // the session refused the connection: a verdict, not a failure
            }
            start = end
        }
    }

    /// Takes the events and writes the output until nothing moves.
    static func settle(_ session: HTTP2ServerSession, window: Int, _ name: String) throws(HTTP2Error) {
        var output = ByteArraySink()
        var rounds = 0
        repeat {
            rounds += 1
            if rounds > 10_000 {
                Issue.record("\(name): the session does not settle")
                return
            }
            while let event = session.nextEvent() {
                switch event {
                case .request(let streamID, _, true), .endStream(let streamID):
                    try? session.respond(
                        streamID: streamID, status: 200, fields: HeaderFields(), hasBody: false)
                case .data(let streamID, _):
                    let held = session.inboundCount(streamID: streamID)
                    #expect(held <= window, "\(name): stream \(streamID) holds \(held) bytes")
                    var body = ByteArraySink()
                    session.consume(
                        streamID: streamID, count: session.readInbound(streamID: streamID, into: &body))
                case .headersTooLarge(let streamID):
                    try? session.respond(
                        streamID: streamID, status: 431, fields: HeaderFields(), hasBody: false)
                default:
                    break
                }
            }
            output.bytes.removeAll(keepingCapacity: true)
        } while try session.writeOutput(into: &output) > 0
    }

    @Test(arguments: [("Regressions", 2), ("Seeds", 8)])
    func h2InputsKeepTheProperty(kind: String, committed: Int) throws {
        let inputs = try fuzzInputs(kind, "FuzzH2")
        #expect(inputs.count >= committed, "Fuzz/\(kind)/FuzzH2 holds \(inputs.count) inputs")
        for (name, bytes) in inputs where !bytes.isEmpty {
            let input = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + bytes.dropFirst()
            try Self.replay(name, input, size: bytes[0] == 0 ? input.count : Int(bytes[0]))
        }
    }
}

/// The committed inputs of a fuzz target, `Fuzz/<kind>/<target>/` (`Regressions` or `Seeds`),
/// sorted by file name; dot files (`.keep`) are not inputs. Throws when the directory is
/// missing.
func fuzzInputs(_ kind: String, _ target: String) throws -> [(name: String, bytes: [UInt8])] {
    let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/\(kind)/\(target)")
    return try FileManager.default.contentsOfDirectory(atPath: directory.path)
        .filter { !$0.hasPrefix(".") }.sorted()
        .map { ($0, [UInt8](try Data(contentsOf: directory.appendingPathComponent($0)))) }
}
