<?php
// A legacy PHP upload endpoint (the compose example, and the tests' PHP upstream): answers with what PHP parsed,
// $_POST and $_FILES, with a sha256 per file.
header('Content-Type: application/json');
$files = [];
foreach ($_FILES as $field => $file) {
    $names = is_array($file['name']) ? $file['name'] : [$file['name']];
    $tmps = is_array($file['tmp_name']) ? $file['tmp_name'] : [$file['tmp_name']];
    $types = is_array($file['type']) ? $file['type'] : [$file['type']];
    $errors = is_array($file['error']) ? $file['error'] : [$file['error']];
    foreach ($names as $i => $name) {
        $files[] = [
            'field' => $field,
            'name' => $name,
            'type' => $types[$i],
            'error' => $errors[$i],
            'size' => $errors[$i] === 0 ? filesize($tmps[$i]) : null,
            'sha256' => $errors[$i] === 0 ? hash_file('sha256', $tmps[$i]) : null,
        ];
    }
}
echo json_encode(['post' => $_POST, 'files' => $files], JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES);
