/// A QR code (ISO/IEC 18004) of some bytes, drawn by the server so the console's TOTP enrollment
/// shows a code an authenticator app scans, with no script and nothing fetched from elsewhere.
///
/// Byte mode, error correction level M, the smallest version from 1 to 20 that holds the bytes
/// (up to 666 of them), and the mask with the lowest penalty by the standard's four rules unless one
/// is asked for. Checked module for module against an independent encoder (`QRCodeTests`).
struct QRCode: Sendable {
    /// The modules row by row, `true` for dark; `size` × `size`, without the quiet zone.
    let modules: [[Bool]]
    let version: Int
    let mask: Int
    var size: Int { modules.count }

    enum Failure: Error, Equatable {
        /// More bytes than version 20 at level M holds.
        case tooLong(Int)
    }

    /// Encodes `bytes`; `mask` (0…7) forces a mask pattern instead of the lowest-penalty one.
    init(_ bytes: [UInt8], mask forcedMask: Int? = nil) throws(Failure) {
        // Mode (4 bits), count (8 bits to version 9, 16 from 10), the bytes.
        guard
            let version = Self.versions.indices.first(where: {
                Self.versions[$0].dataCapacity >= 4 + ($0 + 1 < 10 ? 8 : 16) + bytes.count * 8
            })
        else { throw .tooLong(bytes.count) }
        let blocks = Self.versions[version]
        let codewords = Self.interleaved(Self.dataCodewords(bytes, version: version + 1, blocks: blocks), blocks)
        let base = Matrix(version: version + 1)
        let candidates = forcedMask.map { [$0] } ?? Array(0..<8)
        var best: (matrix: Matrix, mask: Int, penalty: Int)?
        for mask in candidates {
            var matrix = base
            matrix.place(codewords, mask: mask)
            let penalty = forcedMask == nil ? matrix.penalty() : 0
            if best == nil || penalty < best!.penalty { best = (matrix, mask, penalty) }
        }
        self.modules = best!.matrix.dark
        self.version = version + 1
        self.mask = best!.mask
    }

    /// Writes the code as an inline SVG element: dark modules on a light square with the standard
    /// four-module quiet zone, `pixels` wide, labelled for screen readers (light in dark mode too,
    /// so cameras read it).
    func write(to html: inout HTML, pixels: Int = 240, label: String) {
        let side = size + 8
        var path = ""
        for (row, line) in modules.enumerated() {
            var column = 0
            while column < size {
                guard line[column] else {
                    column += 1
                    continue
                }
                var end = column
                while end < size, line[end] { end += 1 }
                path += "M\(column + 4) \(row + 4)h\(end - column)v1h-\(end - column)z"
                column = end
            }
        }
        let attributes: HTML.Attributes = [
            ("xmlns", "http://www.w3.org/2000/svg"), ("viewBox", "0 0 \(side) \(side)"), ("width", String(pixels)),
            ("height", String(pixels)), ("role", "img"), ("aria-label", label), ("shape-rendering", "crispEdges"),
            ("class", "qr"),
        ]
        html.element("svg", attributes) { svg in
            svg.element("rect", [("width", String(side)), ("height", String(side)), ("fill", "#fff")]) { _ in }
            svg.element("path", [("fill", "#000"), ("d", path)]) { _ in }
        }
    }

    // MARK: - Data and error correction

    /// A version's blocks at level M: `count1` blocks of `data1` data codewords, then `count2` of
    /// `data1 + 1`, each followed by `ecPerBlock` error-correction codewords.
    struct Blocks: Sendable {
        let ecPerBlock: Int
        let count1: Int
        let data1: Int
        let count2: Int
        var dataCapacity: Int { (count1 * data1 + count2 * (data1 + 1)) * 8 }
    }

    /// Level M, versions 1…20 (ISO/IEC 18004 table 9).
    static let versions: [Blocks] = [
        Blocks(ecPerBlock: 10, count1: 1, data1: 16, count2: 0),
        Blocks(ecPerBlock: 16, count1: 1, data1: 28, count2: 0),
        Blocks(ecPerBlock: 26, count1: 1, data1: 44, count2: 0),
        Blocks(ecPerBlock: 18, count1: 2, data1: 32, count2: 0),
        Blocks(ecPerBlock: 24, count1: 2, data1: 43, count2: 0),
        Blocks(ecPerBlock: 16, count1: 4, data1: 27, count2: 0),
        Blocks(ecPerBlock: 18, count1: 4, data1: 31, count2: 0),
        Blocks(ecPerBlock: 22, count1: 2, data1: 38, count2: 2),
        Blocks(ecPerBlock: 22, count1: 3, data1: 36, count2: 2),
        Blocks(ecPerBlock: 26, count1: 4, data1: 43, count2: 1),
        Blocks(ecPerBlock: 30, count1: 1, data1: 50, count2: 4),
        Blocks(ecPerBlock: 22, count1: 6, data1: 36, count2: 2),
        Blocks(ecPerBlock: 22, count1: 8, data1: 37, count2: 1),
        Blocks(ecPerBlock: 24, count1: 4, data1: 40, count2: 5),
        Blocks(ecPerBlock: 24, count1: 5, data1: 41, count2: 5),
        Blocks(ecPerBlock: 28, count1: 7, data1: 45, count2: 3),
        Blocks(ecPerBlock: 28, count1: 10, data1: 46, count2: 1),
        Blocks(ecPerBlock: 26, count1: 9, data1: 43, count2: 4),
        Blocks(ecPerBlock: 26, count1: 3, data1: 44, count2: 11),
        Blocks(ecPerBlock: 26, count1: 3, data1: 41, count2: 13),
    ]

    /// The data codewords: the segment, the terminator, zero bits to a byte, then 0xEC 0x11 padding.
    static func dataCodewords(_ bytes: [UInt8], version: Int, blocks: Blocks) -> [UInt8] {
        var bits = BitWriter()
        bits.append(0b0100, count: 4)
        bits.append(bytes.count, count: version < 10 ? 8 : 16)
        for byte in bytes { bits.append(Int(byte), count: 8) }
        let capacity = blocks.dataCapacity
        bits.append(0, count: min(4, capacity - bits.count))
        if bits.count % 8 != 0 { bits.append(0, count: 8 - bits.count % 8) }
        var codewords = bits.bytes
        var pad: UInt8 = 0xEC
        while codewords.count * 8 < capacity {
            codewords.append(pad)
            pad = pad == 0xEC ? 0x11 : 0xEC
        }
        return codewords
    }

    /// The data codewords split into blocks, each given its Reed-Solomon codewords, interleaved.
    static func interleaved(_ data: [UInt8], _ blocks: Blocks) -> [UInt8] {
        var dataBlocks: [[UInt8]] = []
        var offset = 0
        for index in 0..<(blocks.count1 + blocks.count2) {
            let length = index < blocks.count1 ? blocks.data1 : blocks.data1 + 1
            dataBlocks.append(Array(data[offset..<(offset + length)]))
            offset += length
        }
        let generator = GaloisField.generator(degree: blocks.ecPerBlock)
        let ecBlocks = dataBlocks.map { GaloisField.remainder($0, generator) }
        var result: [UInt8] = []
        for index in 0..<(blocks.data1 + 1) {
            for block in dataBlocks where index < block.count { result.append(block[index]) }
        }
        for index in 0..<blocks.ecPerBlock {
            for block in ecBlocks { result.append(block[index]) }
        }
        return result
    }

    struct BitWriter {
        private(set) var bytes: [UInt8] = []
        private(set) var count = 0

        mutating func append(_ value: Int, count width: Int) {
            for shift in stride(from: width - 1, through: 0, by: -1) {
                if count % 8 == 0 { bytes.append(0) }
                if (value >> shift) & 1 == 1 { bytes[bytes.count - 1] |= 0x80 >> UInt8(count % 8) }
                count += 1
            }
        }
    }

    /// GF(256) with the QR code's polynomial x⁸ + x⁴ + x³ + x² + 1.
    enum GaloisField {
        static let tables: (exp: [UInt8], log: [Int]) = {
            var exp = [UInt8](repeating: 0, count: 512)
            var log = [Int](repeating: 0, count: 256)
            var value = 1
            for power in 0..<255 {
                exp[power] = UInt8(value)
                log[value] = power
                value <<= 1
                if value & 0x100 != 0 { value ^= 0x11D }
            }
            for power in 255..<512 { exp[power] = exp[power - 255] }
            return (exp, log)
        }()

        static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
            guard a != 0, b != 0 else { return 0 }
            return tables.exp[tables.log[Int(a)] + tables.log[Int(b)]]
        }

        /// (x − α⁰)(x − α¹)…(x − α^(degree−1)), highest coefficient first.
        static func generator(degree: Int) -> [UInt8] {
            var polynomial: [UInt8] = [1]
            for root in 0..<degree {
                var next = [UInt8](repeating: 0, count: polynomial.count + 1)
                for (index, coefficient) in polynomial.enumerated() {
                    next[index] ^= coefficient
                    next[index + 1] ^= multiply(coefficient, tables.exp[root])
                }
                polynomial = next
            }
            return polynomial
        }

        /// The remainder of data·x^(n) divided by `generator`: the block's error-correction codewords.
        static func remainder(_ data: [UInt8], _ generator: [UInt8]) -> [UInt8] {
            let degree = generator.count - 1
            var remainder = [UInt8](repeating: 0, count: degree)
            for byte in data {
                let factor = byte ^ remainder[0]
                remainder.removeFirst()
                remainder.append(0)
                for index in 0..<degree { remainder[index] ^= multiply(generator[index + 1], factor) }
            }
            return remainder
        }
    }

    // MARK: - The matrix

    struct Matrix: Sendable {
        var dark: [[Bool]]
        /// Modules of the function patterns and format areas, which data and masks leave alone.
        var reserved: [[Bool]]
        let version: Int
        var size: Int { dark.count }

        init(version: Int) {
            self.version = version
            let size = 17 + 4 * version
            dark = Array(repeating: Array(repeating: false, count: size), count: size)
            reserved = dark
            for (row, column) in [(0, 0), (size - 7, 0), (0, size - 7)] { finder(row, column) }
            let centres = Self.alignmentCentres[version - 1]
            for row in centres {
                for column in centres where !reserved[row][column] { alignment(row, column) }
            }
            for index in 8..<(size - 8) {
                if !reserved[6][index] { set(6, index, index % 2 == 0) }
                if !reserved[index][6] { set(index, 6, index % 2 == 0) }
            }
            // The format areas (written with the mask) and the dark module.
            for index in 0..<9 {
                reserved[8][index] = true
                reserved[index][8] = true
            }
            for index in 0..<8 {
                reserved[8][size - 1 - index] = true
                reserved[size - 1 - index][8] = true
            }
            set(size - 8, 8, true)
            if version >= 7 {
                let bits = Self.bch(version, generator: 0x1F25, degree: 12)
                for index in 0..<18 {
                    let bit = (bits >> index) & 1 == 1
                    set(index / 3, index % 3 + size - 11, bit)
                    set(index % 3 + size - 11, index / 3, bit)
                }
            }
        }

        private mutating func set(_ row: Int, _ column: Int, _ value: Bool) {
            dark[row][column] = value
            reserved[row][column] = true
        }

        private mutating func finder(_ top: Int, _ left: Int) {
            for row in -1...7 {
                for column in -1...7 {
                    let (r, c) = (top + row, left + column)
                    guard r >= 0, r < size, c >= 0, c < size else { continue }
                    let ring = max(abs(row - 3), abs(column - 3))
                    set(r, c, ring != 2 && ring != 4)
                }
            }
        }

        private mutating func alignment(_ centreRow: Int, _ centreColumn: Int) {
            for row in -2...2 {
                for column in -2...2 {
                    set(centreRow + row, centreColumn + column, max(abs(row), abs(column)) != 1)
                }
            }
        }

        /// Places the codewords in the two-column zigzag from the bottom right, masked, then the
        /// format information for level M and `mask`.
        mutating func place(_ codewords: [UInt8], mask: Int) {
            var bitIndex = 0
            let totalBits = codewords.count * 8
            var column = size - 1
            var upward = true
            while column > 0 {
                if column == 6 { column -= 1 }
                for step in 0..<size {
                    let row = upward ? size - 1 - step : step
                    for c in [column, column - 1] where !reserved[row][c] {
                        var bit = false
                        if bitIndex < totalBits {
                            bit = (codewords[bitIndex / 8] >> UInt8(7 - bitIndex % 8)) & 1 == 1
                        }
                        bitIndex += 1
                        dark[row][c] = bit != Self.masked(mask, row, c)
                    }
                }
                upward.toggle()
                column -= 2
            }
            // Level M is 00; the 15 bits carry their BCH code and the standard's XOR.
            let format = Self.bch(mask, generator: 0x537, degree: 10) ^ 0x5412
            for index in 0..<15 {
                let bit = (format >> index) & 1 == 1
                dark[index < 6 ? index : (index < 8 ? index + 1 : size - 15 + index)][8] = bit
                dark[8][index < 8 ? size - 1 - index : (index == 8 ? 7 : 14 - index)] = bit
            }
        }

        static func masked(_ mask: Int, _ row: Int, _ column: Int) -> Bool {
            switch mask {
            case 0: (row + column) % 2 == 0
            case 1: row % 2 == 0
            case 2: column % 3 == 0
            case 3: (row + column) % 3 == 0
            case 4: (row / 2 + column / 3) % 2 == 0
            case 5: (row * column) % 2 + (row * column) % 3 == 0
            case 6: ((row * column) % 2 + (row * column) % 3) % 2 == 0
            default: ((row + column) % 2 + (row * column) % 3) % 2 == 0
            }
        }

        /// `value` followed by the remainder of its BCH code (`degree` bits).
        static func bch(_ value: Int, generator: Int, degree: Int) -> Int {
            var remainder = value << degree
            let top = Int.bitWidth - generator.leadingZeroBitCount
            while Int.bitWidth - remainder.leadingZeroBitCount >= top {
                remainder ^= generator << (Int.bitWidth - remainder.leadingZeroBitCount - top)
            }
            return value << degree | remainder
        }

        /// The standard's penalty: runs of five or more, 2×2 blocks, finder-like patterns, and the
        /// share of dark modules away from half.
        func penalty() -> Int {
            var total = 0
            let finderLike: [Bool] = [true, false, true, true, true, false, true]
            for vertical in [false, true] {
                for line in 0..<size {
                    let modules = (0..<size).map { vertical ? dark[$0][line] : dark[line][$0] }
                    var run = 1
                    for index in 1...size {
                        if index < size, modules[index] == modules[index - 1] {
                            run += 1
                        } else {
                            if run >= 5 { total += run - 2 }
                            run = 1
                        }
                    }
                    for start in 0...(size - 7) where Array(modules[start..<(start + 7)]) == finderLike {
                        let before = start >= 4 && !modules[(start - 4)..<start].contains(true)
                        let after = start + 11 <= size && !modules[(start + 7)..<(start + 11)].contains(true)
                        if before { total += 40 }
                        if after { total += 40 }
                    }
                }
            }
            for row in 0..<(size - 1) {
                for column in 0..<(size - 1) {
                    let value = dark[row][column]
                    if dark[row][column + 1] == value, dark[row + 1][column] == value,
                        dark[row + 1][column + 1] == value
                    {
                        total += 3
                    }
                }
            }
            let darkCount = dark.reduce(0) { $0 + $1.count(where: { $0 }) }
            let percent = darkCount * 100 / (size * size)
            total += abs(percent - 50) / 5 * 10
            return total
        }

        /// The alignment patterns' centres, versions 1…20.
        static let alignmentCentres: [[Int]] = [
            [], [6, 18], [6, 22], [6, 26], [6, 30], [6, 34], [6, 22, 38], [6, 24, 42], [6, 26, 46],
            [6, 28, 50], [6, 30, 54], [6, 32, 58], [6, 34, 62], [6, 26, 46, 66], [6, 26, 48, 70],
            [6, 26, 50, 74], [6, 30, 54, 78], [6, 30, 56, 82], [6, 30, 58, 86], [6, 34, 62, 90],
        ]
    }
}
