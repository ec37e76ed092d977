import Foundation
import HTTPCore
import Testing
import UploadRules

/// botocore (the AWS SDK for Python's core, pinned in `make sdk-venv`) as the oracle for
/// `S3PostProvider`: Resources/botocore_s3_post.py runs its `generate_presigned_post` with the
/// same credentials, region, bucket, key, conditions and expiry, with its clock frozen at the
/// same second, and prints its fields and both policies decoded.
///
/// What is compared: botocore writes its own policy JSON (spaced, its own condition order,
/// `expiration` without milliseconds), so the policy bytes differ by design. Instead:
/// 1. the field names, in order, are identical, and every value but `policy` and
///    `x-amz-signature` is identical (`key` too, except with `key_prefix`, where botocore's
///    key ends in `${filename}`);
/// 2. FormGate's `SigV4` signing botocore's own base64 policy gives botocore's
///    `x-amz-signature`, byte for byte;
/// 3. FormGate's policy, decoded by Python's `json`, holds the same set of conditions as
///    botocore's and expires at the same second.
/// Fails, not skips, when FORMGATE_SDK_PYTHON or botocore is missing.
@Suite struct BotocoreS3PostOracleTests {
    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var region: String
        var sessionToken: String?
        var key: String
        var keyPrefix: String?
        var contentType: String?
        var now: Int64
        var conditions: [S3PostCondition]
        var description: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "exact key, Content-Type, extra conditions", region: "eu-west-1",
            key: "uploads/user-42/a.png",
            contentType: "image/png", now: 1_764_597_723,
            conditions: [
                .exact(field: "acl", value: "private"), .startsWith(field: "x-amz-meta-tag", prefix: ""),
            ]),
        Case(
            name: "session token", region: "us-east-1",
            sessionToken: "IQoJb3JpZ2luX2VjEXAMPLE//token+with/slashes==", key: "docs/report 2025.pdf",
            contentType: "application/pdf", now: 1_451_347_200, conditions: []),
        Case(
            name: "key prefix, no Content-Type", region: "ap-southeast-2", sessionToken: "TOKEN",
            key: "uploads/user-42/0f8e.bin", keyPrefix: "uploads/user-42/", now: 1_700_000_001,
            conditions: [.startsWith(field: "Content-Type", prefix: "image/")]),
    ]

    static let maxFileBytes: Int64 = 10 << 20
    static let ttl: Int64 = 900

    struct Decoded {
        var expiration: Int
        var expirationText: String
        var conditions: [String]
    }

    struct Oracle {
        var fields: [InjectedField]
        var botocore: Decoded
        var formgate: Decoded
    }

    func runOracle(_ testCase: Case, formgatePolicy: String) throws -> Oracle {
        let python = try #require(
            ProcessInfo.processInfo.environment["FORMGATE_SDK_PYTHON"],
            "FORMGATE_SDK_PYTHON must name the sdk-venv python (make sdk-venv)")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Resources/botocore_s3_post.py").path
        let conditions =
            "[[\"content-length-range\",0,\(Self.maxFileBytes)]"
            + testCase.conditions.map { "," + $0.json }.joined() + "]"
        var request: [String: Any] = [
            "access_key": SigV4Tests.accessKey, "secret_key": SigV4Tests.secretKey, "region": testCase.region,
            "bucket": "media-bucket", "key": testCase.key, "expires_in": Self.ttl, "now": testCase.now,
            "formgate_policy": formgatePolicy,
            "conditions": try JSONSerialization.jsonObject(with: Data(conditions.utf8)),
        ]
        if let keyPrefix = testCase.keyPrefix { request["key"] = keyPrefix + "${filename}" }
        if let token = testCase.sessionToken { request["session_token"] = token }
        if let contentType = testCase.contentType { request["content_type"] = contentType }
        let argument = String(decoding: try JSONSerialization.data(withJSONObject: request), as: UTF8.self)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script, argument]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "botocore_s3_post.py failed: \(message)")
        let document = try #require(try JSONSerialization.jsonObject(with: printed) as? [String: Any])
        #expect(document["botocore_version"] as? String == "1.44.8")
        let pairs = try #require(document["fields"] as? [[String]])
        func decoded(_ name: String) throws -> Decoded {
            let policy = try #require(document[name] as? [String: Any])
            return Decoded(
                expiration: try #require(policy["expiration"] as? Int),
                expirationText: try #require(policy["expiration_text"] as? String),
                conditions: try #require(policy["conditions"] as? [String]))
        }
        return Oracle(
            fields: pairs.map { InjectedField(name: $0[0], value: $0[1]) }, botocore: try decoded("botocore"),
            formgate: try decoded("formgate"))
    }

    @Test(arguments: cases)
    func sameFieldsAndSignatureAsBotocore(_ testCase: Case) throws {
        let provider = try S3PostProvider(
            settings: S3PostSettings(
                accessKey: SigV4Tests.accessKey, secretKey: SigV4Tests.secretKey,
                sessionToken: testCase.sessionToken, region: testCase.region, bucket: "media-bucket",
                key: try Template("{filename}"), keyPrefix: nil, ttlSeconds: Self.ttl,
                conditions: testCase.conditions))
        let ours = provider.fields(
            key: testCase.key, keyPrefix: testCase.keyPrefix, contentType: testCase.contentType,
            now: testCase.now, maxFileBytes: Self.maxFileBytes)
        let ourPolicy = try #require(ours.first { $0.name == "policy" }?.value)
        let oracle = try runOracle(testCase, formgatePolicy: ourPolicy)
        let theirs = oracle.fields

        // 1. Same names in the same order; same values except the policy, its signature and
        //    (with a prefix) botocore's `${filename}` key.
        #expect(ours.map(\.name) == theirs.map(\.name))
        let unsigned: Set<String> =
            testCase.keyPrefix == nil ? ["policy", "x-amz-signature"] : ["policy", "x-amz-signature", "key"]
        #expect(ours.filter { !unsigned.contains($0.name) } == theirs.filter { !unsigned.contains($0.name) })
        #expect(theirs.contains { $0.name == "x-amz-security-token" } == (testCase.sessionToken != nil))

        // 2. FormGate's signer over botocore's policy text gives botocore's signature.
        let date = try #require(theirs.first { $0.name == "x-amz-date" }?.value.prefix(8))
        let theirPolicy = try #require(theirs.first { $0.name == "policy" }?.value)
        let theirSignature = try #require(theirs.first { $0.name == "x-amz-signature" }?.value)
        #expect(
            SigV4.aws(region: testCase.region).signature(
                secret: SigV4Tests.secretKey, date: String(date), stringToSign: theirPolicy) == theirSignature
        )
        // Our own signature is the same signer over our own policy.
        #expect(
            ours.last?.value
                == SigV4.aws(region: testCase.region).signature(
                    secret: SigV4Tests.secretKey, date: String(date), stringToSign: ourPolicy))

        // 3. The same conditions, the same expiry; only the expiration's spelling differs.
        #expect(oracle.formgate.conditions == oracle.botocore.conditions)
        #expect(oracle.botocore.conditions.count >= 6)
        #expect(oracle.formgate.expiration == oracle.botocore.expiration)
        #expect(oracle.formgate.expiration == Int(testCase.now + Self.ttl))
        #expect(oracle.formgate.expirationText.hasSuffix(".000Z"))
    }
}
