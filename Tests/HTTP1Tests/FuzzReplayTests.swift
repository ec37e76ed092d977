import Foundation
import HTTP1
import Testing

/// The committed inputs of the FuzzHTTPHead and FuzzChunked targets (a first byte that picks
/// the split point, then the input), replayed with each harness's property: regressions at
/// every split point, seeds at the harness's one. Each directory must hold at least its
/// committed inputs: a moved or emptied directory fails here instead of replaying nothing.
@Suite struct FuzzReplayTests {
    /// Where the head scanner ends the head (nil: not yet), and whether it failed.
    struct Scan: Equatable {
        var end: Int?
        var failed = false
    }

    static func scan(_ input: [UInt8], cut: Int?) -> Scan {
        var scanner = HeadScanner(limit: 4096)
        do throws(HTTP1Error) {
            guard let cut else { return Scan(end: try scanner.scan(input)) }
            if let end = try scanner.scan(Array(input[..<cut])) { return Scan(end: end) }
            return Scan(end: try scanner.scan(Array(input[cut...])).map { $0 + cut })
        } catch {
            return Scan(end: nil, failed: true)
        }
    }

    /// FuzzHTTPHead's property for `input` split at `cut`.
    static func checkHead(_ name: String, _ input: [UInt8], cut: Int) {
        #expect(scan(input, cut: cut) == scan(input, cut: nil), "\(name): head scanning differs at \(cut)")
        guard let request = try? HeadParser.parseRequest(input) else { return }
        // Serialized heads say HTTP/1.1 and, for an absolute-form target, add a Host field.
        let again = try? HeadParser.parseRequest(request.serialized(), limits: .init(fields: 10_000))
        #expect(
            request.headers["Host"] == nil
                || (again?.method == request.method && again?.target == request.target
                    && again?.headers == request.headers),
            "\(name): the request head does not survive serialization")
        _ = try? MessageFraming.request(request)
        if let response = try? HeadParser.parseResponse(input) {
            _ = try? MessageFraming.response(response, requestMethod: "GET")
        }
    }

    @Test(arguments: [("Regressions", 2), ("Seeds", 181)])
    func headInputsKeepTheProperty(kind: String, committed: Int) throws {
        let inputs = try fuzzInputs(kind, "FuzzHTTPHead")
        #expect(inputs.count >= committed, "Fuzz/\(kind)/FuzzHTTPHead holds \(inputs.count) inputs")
        for (name, bytes) in inputs where !bytes.isEmpty {
            let input = Array(bytes.dropFirst())
            let cuts =
                kind == "Seeds"
                ? [input.isEmpty ? 0 : Int(bytes[0]) % (input.count + 1)] : Array(0...input.count)
            for cut in cuts { Self.checkHead(name, input, cut: cut) }
        }
    }

    /// The chunked decoder's data, bytes consumed and end, or that it failed.
    struct Decoded: Equatable {
        var data: [UInt8] = []
        var consumed = 0
        var complete = false
        var failed = false
    }

    static func decode(_ input: [UInt8], cuts: [Int]) -> Decoded {
        var decoder = ChunkedDecoder(lineLimit: 256)
        var result = Decoded()
        var start = 0
        for cut in cuts + [input.count] where cut >= start {
            do throws(HTTP1Error) {
                result.consumed += try decoder.decode(Array(input[start..<cut])) { result.data += $0 }
            } catch {
                return Decoded(failed: true)
            }
            start = cut
            if decoder.isComplete { break }
        }
        result.complete = decoder.isComplete
        return result
    }

    @Test(arguments: [("Regressions", 0), ("Seeds", 25)])
    func chunkedInputsDecodeAlikeWholeAndSplit(kind: String, committed: Int) throws {
        let inputs = try fuzzInputs(kind, "FuzzChunked")
        #expect(inputs.count >= committed, "Fuzz/\(kind)/FuzzChunked holds \(inputs.count) inputs")
        for (name, bytes) in inputs where !bytes.isEmpty {
            let input = Array(bytes.dropFirst())
            let whole = Self.decode(input, cuts: [])
            let cuts =
                kind == "Seeds"
                ? [input.isEmpty ? 0 : Int(bytes[0]) % (input.count + 1)] : Array(0...input.count)
            for cut in cuts {
                #expect(
                    Self.decode(input, cuts: [cut]) == whole, "\(name): chunked decoding differs at \(cut)")
            }
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
