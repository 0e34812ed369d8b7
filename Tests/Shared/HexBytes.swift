/// The bytes a test vector's hex text spells, two digits a byte; traps on anything else (vectors
/// are fixed files). One copy for every test target: the others link this file.
func hexBytes(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        bytes.append(UInt8(text[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}
