<?php
// The tus tests' PHP upstream (the router script of `php -S`): counts the requests PHP runs,
// one "METHOD URI" line each appended to the file FORMGATE_COUNT_FILE names before anything is
// answered (an upstream-side count: a second delivery adds a line), then runs the compose
// example's docker/php/upload.php, which answers with $_POST and $_FILES (sha256 per file).
file_put_contents(
    getenv('FORMGATE_COUNT_FILE'),
    $_SERVER['REQUEST_METHOD'] . ' ' . $_SERVER['REQUEST_URI'] . "\n",
    FILE_APPEND | LOCK_EX
);
require __DIR__ . '/../../../docker/php/upload.php';
