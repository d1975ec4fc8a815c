/**/
/***/
/** */
provider doc {
    /**
     *
     * Fired when a request starts. */ here */
     *
     */
    probe req__start(int fd, const char *path);
    /** one line with a star-slash inside a string "*/
    probe req__done();
    /**
    **
    ***/
    probe x();
};
