;;; hover_and_diagnostic.el --- headless Emacs + eglot as a real LSP client of warpsight -*- lexical-binding: t -*-
;;
;; Emacs 28 with eglot 1.9 (Debian `emacs-nox', `elpa-eglot') drives `warpsight lsp':
;; opens a PTX file with one garbage line, waits for the syntax diagnostic on that line,
;; asks for a hover on the kernel name, then shuts the server down the way eglot does
;; (`shutdown' with `"params": null', then `exit') and checks that it answered and exited
;; with status 0. tower-lsp 0.20 failed exactly that shutdown (docs/lsp-extensions.md);
;; this keeps it tested with the client that found it.
;;
;; Run: WARPSIGHT_BIN=... FIXTURE=... emacs --batch -q -l THIS
;; (`-q', not `-Q': Debian's site-start activates the eglot package that `elpa-eglot'
;; installs under /usr/share/emacs/site-lisp/elpa.)
;; Exits 0 when everything held; prints `emacs-lsp-test: FAIL: ...' and exits 1 otherwise.

(require 'cl-lib)
(require 'eglot)

(defun warpsight-test-fail (fmt &rest args)
  (princ (concat "emacs-lsp-test: FAIL: " (apply #'format fmt args) "\n")
         #'external-debugging-output)
  (kill-emacs 1))

(defun warpsight-test-wait (pred seconds)
  "Process server output until PRED holds or SECONDS pass; return PRED's value."
  (let ((deadline (+ (float-time) seconds)) (v nil))
    (while (and (not (setq v (funcall pred))) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    v))

(defvar warpsight-test-diagnostics nil
  "The last publishDiagnostics params for the fixture: (URI . DIAGNOSTICS).")

(cl-defmethod eglot-handle-notification :before
  (_server (_method (eql textDocument/publishDiagnostics)) &key uri diagnostics
           &allow-other-keys)
  (setq warpsight-test-diagnostics (cons uri diagnostics)))

(define-derived-mode ptx-mode prog-mode "PTX" "PTX assembly (for this test).")
(add-to-list 'auto-mode-alist '("\\.ptx\\'" . ptx-mode))

(let* ((bin (or (getenv "WARPSIGHT_BIN") (warpsight-test-fail "WARPSIGHT_BIN is not set")))
       (fixture (or (getenv "FIXTURE") (warpsight-test-fail "FIXTURE is not set")))
       (eglot-autoreconnect nil)
       (eglot-sync-connect t)
       (inhibit-message t))
  (add-to-list 'eglot-server-programs
               `(ptx-mode ,bin "lsp" :initializationOptions (:debounceMs 0)))
  (find-file fixture)
  (unless (eq major-mode 'ptx-mode) (warpsight-test-fail "the fixture did not open in ptx-mode"))
  ;; `eglot-ensure' does nothing in batch mode; start the connection directly.
  (condition-case err
      (apply #'eglot (eglot--guess-contact))
    (error (warpsight-test-fail "eglot could not start the server: %S" err)))
  (let* ((server (or (eglot-current-server) (warpsight-test-fail "eglot did not connect")))
         (uri (eglot--path-to-uri buffer-file-name))
         (bad-line (save-excursion
                     (goto-char (point-min))
                     (unless (search-forward "this is ( not ptx" nil t)
                       (warpsight-test-fail "the fixture has no garbage line"))
                     (1- (line-number-at-pos))))
         (syntax nil))
    ;; 1. The syntax diagnostic, on the garbage line.
    (unless (warpsight-test-wait
             (lambda ()
               (when (and warpsight-test-diagnostics
                          (equal (car warpsight-test-diagnostics) uri))
                 (setq syntax (cl-remove-if-not
                               (lambda (d) (equal (plist-get d :code) "syntax"))
                               (append (cdr warpsight-test-diagnostics) nil)))
                 t))
             20)
      (warpsight-test-fail "no publishDiagnostics for %s within 20 s" uri))
    (when (null syntax) (warpsight-test-fail "no syntax diagnostic (expected one on line %d)" bad-line))
    (let ((line (plist-get (plist-get (plist-get (car syntax) :range) :start) :line)))
      (unless (= line bad-line)
        (warpsight-test-fail "syntax diagnostic on line %s, expected %d" line bad-line)))
    ;; 2. A hover on the kernel name: the performance card.
    (let* ((pos (save-excursion
                  (goto-char (point-min))
                  (unless (re-search-forward "\\.entry[ \t]+\\(vadd\\)(" nil t)
                    (warpsight-test-fail "the fixture has no `.entry vadd('"))
                  (goto-char (match-beginning 1))
                  (list :line (1- (line-number-at-pos)) :character (1+ (current-column)))))
           (hover (condition-case err
                      (jsonrpc-request server :textDocument/hover
                                       (list :textDocument (list :uri uri) :position pos)
                                       :timeout 20)
                    (error (warpsight-test-fail "hover failed: %S" err))))
           (value (or (plist-get (plist-get hover :contents) :value) "")))
      (unless (string-match-p "vadd" value)
        (warpsight-test-fail "hover lacks the kernel name: %S" value))
      (unless (string-match-p "occupancy" value)
        (warpsight-test-fail "hover lacks the occupancy: %S" value))
      (princ (format "emacs-lsp-test: ok: %d syntax diagnostic(s); hover: %s\n"
                     (length syntax)
                     (substring (replace-regexp-in-string "\n" " " value) 0 (min 80 (length value))))
             #'external-debugging-output))
    ;; 3. Shutdown as eglot sends it (params null), then exit: the server must answer and
    ;; exit on its own with status 0.
    (let ((proc (jsonrpc--process server)))
      (setf (eglot--shutdown-requested server) t)
      (condition-case err
          (jsonrpc-request server :shutdown nil :timeout 10)
        (error (warpsight-test-fail "shutdown (params null) failed: %S" err)))
      (jsonrpc-notify server :exit nil)
      (unless (warpsight-test-wait (lambda () (not (process-live-p proc))) 10)
        (warpsight-test-fail "the server did not exit within 10 s of `exit'"))
      (unless (= 0 (process-exit-status proc))
        (warpsight-test-fail "the server exited with status %d" (process-exit-status proc)))
      (princ "emacs-lsp-test: ok: shutdown answered, exit status 0\n" #'external-debugging-output)))
  (kill-emacs 0))
