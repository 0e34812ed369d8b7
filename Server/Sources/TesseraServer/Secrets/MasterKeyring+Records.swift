/// The sealing of the stores' secret columns, shared by every backend.
extension MasterKeyring {
    /// An identity secret as stored.
    func sealIdentitySecret(_ value: String, projectID: String, kid: String) -> String {
        String(
            decoding: seal(Array(value.utf8), binding: .identitySecret(projectID: projectID, kid: kid)), as: UTF8.self)
    }

    /// An identity secret as stored, opened.
    func openIdentitySecret(_ stored: String, projectID: String, kid: String) throws(MasterKeyError) -> String {
        String(
            decoding: try open(Array(stored.utf8), binding: .identitySecret(projectID: projectID, kid: kid)),
            as: UTF8.self)
    }

    /// A signing key's private key as stored.
    func sealSessionKey(_ privateKey: [UInt8], projectID: String, kid: String) -> [UInt8] {
        seal(privateKey, binding: .sessionKey(projectID: projectID, kid: kid))
    }

    /// A signing key's private key as stored, opened.
    func openSessionKey(_ stored: [UInt8], projectID: String, kid: String) throws(MasterKeyError) -> [UInt8] {
        try open(stored, binding: .sessionKey(projectID: projectID, kid: kid))
    }

    /// A text secret as stored under `binding` (the sealed value's ASCII form).
    func sealText(_ value: String, binding: SecretBinding) -> String {
        String(decoding: seal(Array(value.utf8), binding: binding), as: UTF8.self)
    }

    /// A text secret as stored under `binding`, opened.
    func openText(_ stored: String, binding: SecretBinding) throws(MasterKeyError) -> String {
        String(decoding: try open(Array(stored.utf8), binding: binding), as: UTF8.self)
    }
}
