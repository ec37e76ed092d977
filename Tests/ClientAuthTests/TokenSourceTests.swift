import ClientAuth
import HTTP1
import HTTPCore
import Testing

@Suite struct TokenSourceTests {
    func head(_ fields: [(String, String)], target: String = "/upload") -> RequestHead {
        RequestHead(method: "POST", target: target, headers: HeaderFields(fields))
    }

    func token(_ source: TokenSource, _ head: RequestHead) -> Result<String, TokenSource.Failure> {
        source.token(in: head).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func readsABearerTokenInAnySchemeCase() {
        for value in ["Bearer abc.def.ghi", "bearer abc.def.ghi", "BEARER   abc.def.ghi"] {
            #expect(token(.bearer, head([("Authorization", value)])) == .success("abc.def.ghi"), "\(value)")
        }
        #expect(token(.bearer, head([("authorization", "Bearer t")])) == .success("t"))
    }

    @Test func refusesOtherSchemesAndOddBearerValues() {
        for value in [
            "Basic dXNlcjpwYXNz", "Bearer", "Bearer ", "Bearerabc", "Bearer a b", "Bearer\ta", "Token abc",
        ] {
            #expect(token(.bearer, head([("Authorization", value)])) == .failure(.malformed), "\(value)")
        }
    }

    @Test func missingAndAmbiguousAreDistinct() {
        #expect(token(.bearer, head([])) == .failure(.missing))
        #expect(token(.bearer, head([("X-Other", "Bearer a")])) == .failure(.missing))
        let twice = head([("Authorization", "Bearer a"), ("Authorization", "Bearer a")])
        #expect(token(.bearer, twice) == .failure(.ambiguous))
    }

    @Test func readsANamedHeader() {
        let source = TokenSource.header("X-Upload-Token")
        #expect(token(source, head([("x-upload-token", "t1")])) == .success("t1"))
        #expect(token(source, head([])) == .failure(.missing))
        #expect(token(source, head([("X-Upload-Token", "")])) == .failure(.malformed))
        #expect(
            token(source, head([("X-Upload-Token", "a"), ("X-Upload-Token", "b")])) == .failure(.ambiguous))
    }

    @Test func readsACookieAcrossCookieFields() {
        let source = TokenSource.cookie("session")
        #expect(token(source, head([("Cookie", "a=1; session=tok; b=2")])) == .success("tok"))
        #expect(token(source, head([("Cookie", "session=tok")])) == .success("tok"))
        #expect(token(source, head([("Cookie", "a=1"), ("Cookie", "session=\"tok\"")])) == .success("tok"))
        #expect(token(source, head([("Cookie", "a=1;session=tok;")])) == .success("tok"))
        #expect(token(source, head([("Cookie", "xsession=1; sessionx=2; Session=3")])) == .failure(.missing))
        #expect(token(source, head([("Cookie", "a=1")])) == .failure(.missing))
        #expect(token(source, head([])) == .failure(.missing))
        #expect(token(source, head([("Cookie", "session=")])) == .failure(.malformed))
        #expect(token(source, head([("Cookie", "session=a; session=b")])) == .failure(.ambiguous))
        #expect(
            token(source, head([("Cookie", "session=a"), ("Cookie", "session=a")])) == .failure(.ambiguous))
    }

    @Test func readsAPercentDecodedQueryParameter() {
        let source = TokenSource.query("access_token")
        #expect(token(source, head([], target: "/u?access_token=abc.def")) == .success("abc.def"))
        #expect(token(source, head([], target: "/u?x=1&access_token=a%2Eb&y")) == .success("a.b"))
        #expect(token(source, head([], target: "/u?access%5Ftoken=t")) == .success("t"))
        #expect(token(source, head([], target: "/u?access_token=a+b")) == .success("a+b"))
        #expect(token(source, head([], target: "/u")) == .failure(.missing))
        #expect(token(source, head([], target: "/u?access_tokens=1")) == .failure(.missing))
        #expect(token(source, head([], target: "/u?access_token=1&access_token=1")) == .failure(.ambiguous))
        #expect(token(source, head([], target: "/u?access_token=%zz")) == .failure(.malformed))
        #expect(token(source, head([], target: "/u?access_token=%4")) == .failure(.malformed))
        #expect(token(source, head([], target: "/u?access_token")) == .failure(.malformed))
        #expect(token(source, head([], target: "/u?access_token=")) == .failure(.malformed))
    }

    @Test func aHeaderFloodIsStillOneAnswer() {
        var fields = (0..<500).map { ("X-Junk-\($0)", String(repeating: "v", count: 100)) }
        fields.append(("Authorization", "Bearer real"))
        #expect(token(.bearer, head(fields)) == .success("real"))
        fields.append(contentsOf: (0..<200).map { _ in ("Cookie", "a=1; b=2") })
        #expect(token(.cookie("b"), head(fields)) == .failure(.ambiguous))
    }
}
