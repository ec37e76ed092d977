import Foundation
import HTTPCore
import Testing
import UploadRules

/// The vendors' SDKs as oracles (Resources/oss_cos_oracle.py under FORMGATE_SDK_PYTHON, the
/// Makefile's `.build/sdk-venv` with oss2 2.19.1 and cos-python-sdk-v5 1.9.44): oss2 signs
/// the very base64 policies FormGate's OSS provider emits, V1 and V4; cos-python-sdk-v5 signs
/// a request at a frozen clock and FormGate's COS chain must sign its string-to-sign the same.
/// Neither SDK has a POST-policy signer (see the script); the POST-only step of COS is pinned
/// by Tencent's published vector in COSPostProviderTests. Fails, not skips, without the SDKs.
@Suite struct OSSCOSOracleTests {
    static let region = "cn-shanghai"

    /// Providers whose policies go to oss2: V1 and V4, with and without a token, a key with
    /// JSON escapes and UTF-8, another day and region.
    static func ossCases() throws -> [(OSSPostProvider, ProviderContext)] {
        var values = TemplateValues()
        values.basename = "r\u{E9}sum\u{E9} \"final\""
        values.ext = ".pdf"
        values.identity = Identity(subject: "user/42", method: .jwt)
        let key = try Template("uploads/{auth:sub}/{basename}{ext}")
        let early = ProviderContext(
            values: values, contentType: "application/pdf", now: 1_385_899_200, maxFileBytes: 1)
        let late = ProviderContext(values: values, now: 1_767_225_599, maxFileBytes: 268_435_456)
        func provider(_ version: OSSPostProvider.Version, token: String?, region: String) -> OSSPostProvider {
            OSSPostProvider(
                version: version, accessKey: "LTAI5tExampleKey",
                secretKey: "OtxrzxIsfpFjA7SwPzILwy8Bw21TLhquhboDYROV",
                securityToken: token, region: region, bucket: "examplebucket", key: key, ttlSeconds: 3600,
                successActionStatus: token == nil ? nil : "201")
        }
        return [
            (provider(.v1, token: nil, region: region), early),
            (provider(.v1, token: "CAIS+token/==", region: region), late),
            (provider(.v4, token: nil, region: "cn-hangzhou"), early),
            (provider(.v4, token: "CAIS+token/==", region: region), late),
            (provider(.v4, token: nil, region: "ap-southeast-1"), late),
        ]
    }

    @Test func signaturesMatchTheSDKs() throws {
        var v1: [[String: Any]] = []
        var v4: [[String: Any]] = []
        var emitted: [(OSSPostProvider.Version, [String: String])] = []
        for (provider, context) in try Self.ossCases() {
            var random = SplitMix64(seed: 3)
            let fields = Dictionary(
                uniqueKeysWithValues: provider.fields(for: context, random: &random).map {
                    ($0.name, $0.value)
                })
            let policy = try #require(fields["policy"])
            switch provider.version {
            case .v1:
                v1.append(["secret": provider.secretKey, "policy": policy])
            case .v4:
                v4.append([
                    "access_key": provider.accessKey, "secret": provider.secretKey, "region": provider.region,
                    "date_time": try #require(fields["x-oss-date"]), "policy": policy,
                ])
            }
            emitted.append((provider.version, fields))
        }
        let cos: [[String: Any]] = [
            [
                "secret_id": "AKIDQjz3ltompVjBni5LitkWHFlFpwkn9U5q",
                "secret_key": "BQYIM75p8x0iWVFSIgqEKwFprpRSVHlz",
                "now": 1_567_150_752, "expire": 7200,
            ],
            ["secret_id": "AKID-other", "secret_key": "another-secret", "now": 1_701_605_532, "expire": 60],
        ]
        let answer = try Self.runOracle(["oss_v1": v1, "oss_v4": v4, "cos": cos])
        let versions = try #require(answer["versions"] as? [String: String])
        #expect(versions["oss2"] == "2.19.1")
        #expect(versions["cos-python-sdk-v5"] == "5.1.9.44")

        let v1Answers = try #require(answer["oss_v1"] as? [[String: String]])
        let v4Answers = try #require(answer["oss_v4"] as? [[String: String]])
        #expect(v1Answers.count == 2)
        #expect(v4Answers.count == 3)
        var v1Index = 0
        var v4Index = 0
        for (version, fields) in emitted {
            switch version {
            case .v1:
                #expect(fields["Signature"] == v1Answers[v1Index]["signature"])
                v1Index += 1
            case .v4:
                #expect(fields["x-oss-signature"] == v4Answers[v4Index]["signature"])
                #expect(fields["x-oss-credential"] == v4Answers[v4Index]["credential"])
                v4Index += 1
            }
        }

        let cosAnswers = try #require(answer["cos"] as? [[String: String]])
        #expect(cosAnswers.count == 2)
        for (request, sdk) in zip(cos, cosAnswers) {
            let keyTime = try #require(sdk["q-key-time"])
            let now = try #require(request["now"] as? Int)
            let expire = try #require(request["expire"] as? Int)
            // The SDK's key time starts a minute back, as FormGate's does.
            #expect(keyTime == "\(now - Int(COSPostProvider.clockSkewSeconds));\(now + expire)")
            let ours = COSPostProvider.signature(
                secretKey: try #require(request["secret_key"] as? String), keyTime: keyTime,
                stringToSign: try #require(sdk["string_to_sign"]))
            #expect(ours == sdk["q-signature"])
            #expect(sdk["q-ak"] == request["secret_id"] as? String)
        }
    }

    /// Runs the script with `request` on stdin; its JSON answer.
    static func runOracle(_ request: [String: Any]) throws -> [String: Any] {
        let python = try #require(
            ProcessInfo.processInfo.environment["FORMGATE_SDK_PYTHON"],
            "FORMGATE_SDK_PYTHON is not set: run `make sdk-venv` and point it at .build/sdk-venv/bin/python")
        try #require(FileManager.default.isExecutableFile(atPath: python), "no Python at \(python)")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Resources/oss_cos_oracle.py").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script]
        let input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        input.fileHandleForWriting.write(try JSONSerialization.data(withJSONObject: request))
        try input.fileHandleForWriting.close()
        let answer = output.fileHandleForReading.readDataToEndOfFile()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "oss_cos_oracle.py failed: \(message)")
        return try #require(try JSONSerialization.jsonObject(with: answer) as? [String: Any])
    }
}
