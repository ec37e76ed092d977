import CCrypto
import ClientAuth
import Foundation
import HTTP1
import HTTPCore
import Testing

@Suite struct APIKeySetTests {
    func sha256Hex(_ text: String) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let bytes = Array(text.utf8)
        _ = EVP_Digest(bytes, bytes.count, &digest, &length, EVP_sha256(), nil)
        return digest.map {
            String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16)
        }
        .joined()
    }

    func load(_ text: String, header: String = "X-Api-Key") throws(APIKeyFileError) -> APIKeySet {
        try APIKeySet(fileContents: Array(text.utf8), header: header)
    }

    func failure(_ text: String) -> APIKeyFileError? {
        do throws(APIKeyFileError) {
            _ = try load(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func looksKeysUpByTheirDigest() throws {
        let file = """
            # uploaders
            mobile-app: \(sha256Hex("key-one"))

            backend.batch@ops :  \(sha256Hex("key-two").uppercased())\r
            """
        let keys = try load(file)
        #expect(keys.count == 2)
        #expect(keys.lookup(Array("key-one".utf8)) == "mobile-app")
        #expect(keys.lookup(Array("key-two".utf8)) == "backend.batch@ops")
        #expect(keys.lookup(Array("key-three".utf8)) == nil)
        #expect(keys.lookup(Array("key-one ".utf8)) == nil)
        #expect(keys.lookup([]) == nil)
        // The file holds digests: a digest presented as the key is not the key.
        #expect(keys.lookup(Array(sha256Hex("key-one").utf8)) == nil)
    }

    @Test func identifiesTheKeyInTheConfiguredHeader() throws {
        let keys = try load("app: \(sha256Hex("s3cret"))", header: "X-Upload-Key")
        func identify(_ fields: [(String, String)]) -> Result<String, APIKeySet.Rejection> {
            keys.identify(RequestHead(method: "POST", target: "/", headers: HeaderFields(fields)))
        }
        #expect(identify([("x-upload-key", "s3cret")]) == .success("app"))
        #expect(identify([("X-Api-Key", "s3cret")]) == .failure(.missing))
        #expect(identify([("X-Upload-Key", "wrong")]) == .failure(.unknownKey))
        #expect(identify([("X-Upload-Key", "s3cret"), ("X-Upload-Key", "s3cret")]) == .failure(.ambiguous))
        #expect(identify([("X-Upload-Key", "")]) == .failure(.malformed))
        #expect(identify([("X-Upload-Key", String(repeating: "k", count: 257))]) == .failure(.malformed))
        #expect(APIKeySet.Rejection.unknownKey.rawValue == "unknown_key")
    }

    @Test func loadsAKeyFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("api-keys-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data("ci: \(sha256Hex("ci-key"))\n".utf8).write(to: URL(fileURLWithPath: path))
        let keys = try APIKeySet(contentsOfFile: path)
        #expect(keys.header == "X-Api-Key")
        #expect(keys.lookup(Array("ci-key".utf8)) == "ci")
    }

    @Test func limitsTheKeyLength() throws {
        let long = String(repeating: "k", count: 300)
        let keys = try APIKeySet(fileContents: Array("a: \(sha256Hex(long))".utf8), maximumKeyBytes: 300)
        #expect(keys.lookup(Array(long.utf8)) == "a")
        let strict = try load("a: \(sha256Hex(long))")
        #expect(strict.lookup(Array(long.utf8)) == nil)
    }

    @Test func reportsFileErrorsWithLineNumbers() {
        let digest = sha256Hex("k")
        #expect(failure("a \(digest)") == APIKeyFileError(.missingColon, line: 1))
        #expect(failure("# c\n\n: \(digest)") == APIKeyFileError(.invalidName, line: 3))
        #expect(failure("a b: \(digest)") == APIKeyFileError(.invalidName, line: 1))
        #expect(
            failure("\(String(repeating: "n", count: 65)): \(digest)")
                == APIKeyFileError(.invalidName, line: 1))
        #expect(failure("a: \(digest.dropLast())") == APIKeyFileError(.invalidDigest, line: 1))
        #expect(failure("a: \(digest.dropLast())g") == APIKeyFileError(.invalidDigest, line: 1))
        #expect(failure("a: \(digest) # comment") == APIKeyFileError(.invalidDigest, line: 1))
        #expect(
            failure("a: \(digest)\nb: \(sha256Hex("x"))\na: \(sha256Hex("y"))")
                == APIKeyFileError(.duplicateName("a"), line: 3))
        #expect(
            failure("a: \(digest)\nb: \(digest.uppercased())") == APIKeyFileError(.duplicateDigest, line: 2))
        #expect(failure("# nothing\n\n") == APIKeyFileError(.noKeys, line: 3))
        #expect(failure("") == APIKeyFileError(.noKeys, line: 1))
        #expect(APIKeyFileError(.invalidDigest, line: 4).description == "line 4: invalidDigest")
        #expect(throws: APIKeyFileError(.unreadable("/nonexistent/keys"), line: 0)) {
            try APIKeySet(contentsOfFile: "/nonexistent/keys")
        }
    }
}
