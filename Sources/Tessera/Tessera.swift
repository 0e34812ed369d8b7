public enum TesseraPlaceholder {}
