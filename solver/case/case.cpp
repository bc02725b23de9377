// to_string helpers live in io/case_file.cpp next to the parser that reads the same words.
